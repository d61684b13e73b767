import { describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";
import { JobLogs } from "../../../src/api/jobs/job-logs.ts";
import { JobViews } from "../../../src/projections/jobs/job-views.ts";
import type { NodeLogReader } from "../../../src/transport/node-log-client.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { envelopeOf } from "../../support/recorded-event.ts";

const JOB = "j-7a4c7576-5fbf-461b-b644-952b571ec500";
const FIRST = "e-e8b890b4-75c0-4d13-9c78-52fc3e7fb91d";
const SECOND = "e-e8b890b4-1111-4d13-9c78-52fc3e7fb91d";
const THIRD = "e-0123abcd-75c0-4d13-9c78-52fc3e7fb91d";

/** The logs' choice of execution, from a read model holding one job and its three executions. */
function logsOfOneJob(): JobLogs {
  const views = new JobViews();
  views.handleEnvelope(envelopeOf(`job-${JOB}`, exampleEvent("JobSubmitted", JOB)));
  for (const id of [FIRST, SECOND, THIRD])
    views.handleEnvelope(envelopeOf(`execution-${id}`, exampleEvent("ExecutionCreated", id, { JobID: JOB })));
  const clock = new ManualClock();
  // select() reads the read model only: no node is asked.
  return new JobLogs(views, {} as NodeLogReader, { clock, deadlines: new DeadlineScheduler(clock) });
}

describe("job logs' execution_id: a full id or a unique prefix, as a job's id", () => {
  const logs = logsOfOneJob();
  const pick = (executionId: string) => logs.select("j-7a4c7576", { executionId }).executionId;

  it("the full id, and the short id the CLI prints when it is unique", () => {
    expect(pick(FIRST)).toBe(FIRST);
    expect(pick("e-0123abcd")).toBe(THIRD);
    expect(pick("e-0123")).toBe(THIRD);
  });

  it("a prefix two executions share: a 400 naming both, never one of them", () => {
    expect(() => pick("e-e8b890b4")).toThrowError(
      expect.objectContaining({
        kind: "BadRequest",
        message: `multiple executions found for ID prefix e-e8b890b4: [${SECOND}, ${FIRST}]`,
      }),
    );
  });

  it("a prefix of none of the job's executions: not found", () => {
    expect(() => pick("e-ffff")).toThrowError(
      expect.objectContaining({ kind: "NotFound", message: `unable to find execution e-ffff in job ${JOB}` }),
    );
  });
});
