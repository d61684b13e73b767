import { randomUUID } from "node:crypto";
import type { ExecutionCommand } from "../../machines/execution/execution-commands.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { validateJobSubmission } from "../../src/actors/job-submission/validate-job-submission.ts";
import type { JobCommand } from "../../machines/job/job-commands.ts";
import { executionIdOf, jobIdOf } from "../../machines/job/job-id.ts";
import { parseTaskResources } from "../../machines/job/task-resources.ts";
import { executionKind } from "../../src/actors/execution-kind.ts";
import { jobKind } from "../../src/actors/job-kind.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";

/** One stored row as the bench writes it: stream, revision in it, and the encoded event. */
export interface SeedRow {
  readonly stream: string;
  readonly revision: number;
  readonly event: NewEvent;
}

const RESOURCES = { CPU: "250m", Memory: "32Mb" };

/**
 * A batch job's whole life as the orchestrator stores it, made by the job and execution deciders
 * themselves (decide, then encode as the actor does), so a start folds exactly what a real run
 * leaves: JobSubmitted, ExecutionCreated, JobStarted, the node's bid accepted and approved,
 * ExecutionStarted, ExecutionCompleted, JobCompleted (8 events, two streams). `at` gives each
 * event's time in milliseconds.
 */
export function completedJobRows(nodeId: string, at: () => number): SeedRow[] {
  const jobId = jobIdOf(randomUUID());
  const executionId = executionIdOf(randomUUID());
  const rows: SeedRow[] = [];
  let job = jobKind.decider.initialState(jobId);
  let execution = executionKind.decider.initialState(executionId);
  const metadata = (now: number) => ({
    time: new Date(now).toISOString(),
    actor: { type: "system", id: "bench" },
    correlationId: jobId,
    causationId: jobId,
  });
  let jobRevision = -1;
  const onJob = (command: JobCommand) => {
    const now = at();
    const decision = jobKind.decider.decide(command, job, { now });
    if (!decision.ok) throw new Error(`seeding job ${jobId}: ${command.type} refused: ${decision.refusal.message}`);
    for (const e of decision.events) {
      const event = jobKind.encode(e, metadata(now), randomUUID());
      job = jobKind.decider.evolve(job, e, event.metadata.time as string);
      rows.push({ stream: `job-${jobId}`, revision: ++jobRevision, event });
    }
  };
  let executionRevision = -1;
  const onExecution = (command: ExecutionCommand) => {
    const now = at();
    const decision = executionKind.decider.decide(command, execution, { now });
    if (!decision.ok)
      throw new Error(`seeding execution ${executionId}: ${command.type} refused: ${decision.refusal.message}`);
    for (const e of decision.events) {
      const event = executionKind.encode(e, metadata(now), randomUUID());
      execution = executionKind.decider.evolve(execution, e, event.metadata.time as string);
      rows.push({ stream: `execution-${executionId}`, revision: ++executionRevision, event });
    }
  };
  onJob({
    type: "Submit",
    submission: validateJobSubmission(
      {
        Type: "batch",
        Tasks: [
          {
            Name: "main",
            Engine: {
              Type: "docker",
              Params: { Image: "shoal-test/busybox:1", Entrypoint: ["echo"], Parameters: ["hello"] },
            },
            Resources: RESOURCES,
          },
        ],
      },
      { jobId, defaults: BACALHAU_JOB_DEFAULTS },
    ),
  });
  onExecution({
    type: "Create",
    jobId,
    namespace: "default",
    nodeId,
    jobType: "batch",
    jobVersion: 1,
    partitionIndex: 0,
    resources: parseTaskResources(RESOURCES),
    executionTimeout: 0,
    timeoutBuffer: 60,
  });
  onJob({ type: "Run" });
  onExecution({ type: "AcceptBid" });
  onExecution({ type: "Approve" });
  onExecution({ type: "Start" });
  onExecution({
    type: "Complete",
    output: {
      Stdout: "hello\n",
      StdoutTruncated: false,
      stderr: "",
      StderrTruncated: false,
      ExitCode: 0,
      ErrorMsg: "",
    },
  });
  onJob({ type: "Complete" });
  return rows;
}
