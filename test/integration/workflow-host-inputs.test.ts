import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CorruptEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { jobFlow } from "../../src/workflows/jobs/job-flow.ts";
import { nodeReactions } from "../../src/workflows/nodes/node-reactions.ts";
import type { IssuedCommand, Workflow } from "../../src/workflows/workflow.ts";
import { WORKFLOW_STEP_EVENT, WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { exampleEvent } from "../support/example-events.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { recordedEvent } from "../support/recorded-event.ts";

/**
 * The workflow host hands its workflow the envelope's typed event: one its kind's schema rejects stops the step before
 * anything is recorded or done, and a workflow's own step is no input. A real SQLite store.
 */
const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

function hostOf(workflow: Workflow) {
  const store = new SqliteEventStore(join(tempDir("shoal-workflow-inputs-"), "shoal.db"));
  opened.push(store);
  const ran: string[] = [];
  const record = (c: IssuedCommand) => void ran.push(`${c.type} ${c.entityId}`);
  const handlers = { "node-work": record, "job-placement": record };
  return { store, ran, host: new WorkflowHost(workflow, { store, handlers, logger: silentLogger }) };
}

/** n-daemon runs a daemon execution. */
const reactions = nodeReactions({
  holdsWork: (id) => id === "n-daemon",
  holdsDaemonWork: (id) => id === "n-daemon",
  mayRunLostWork: () => false,
});

/** `stored` with `data` in place of its data: what a damaged store gives back. */
const damaged = (stored: ReturnType<typeof recordedEvent>, data: unknown) => new EventEnvelope({ ...stored, data });

describe("the workflow host's inputs", () => {
  it("a node's labels changed: the step is recorded with its input and the command runs", async () => {
    const { store, ran, host } = hostOf(reactions);
    const stored = recordedEvent("node-n-daemon", exampleEvent("NodeInfoUpdated", "n-daemon"), 5);
    await host.handle([new EventEnvelope(stored)]);
    expect(ran).toEqual(["CheckDaemonMatch n-daemon"]);
    const [step] = await store.readStream("workflow-node-reactions");
    expect(step).toMatchObject({
      type: WORKFLOW_STEP_EVENT,
      data: { Input: { EventID: stored.id, Stream: "node-n-daemon", Type: "NodeInfoUpdated", Position: 5 } },
    });
  });

  it("an entity's event its schema rejects stops the step: nothing recorded, no command, the field named", async () => {
    const info = recordedEvent("node-n-daemon", exampleEvent("NodeInfoUpdated", "n-daemon"));
    const nodes = hostOf(reactions);
    const badInfo = damaged(info, { ...(info.data as object), Changed: "Labels" });
    await expect(nodes.host.handle([badInfo])).rejects.toThrow(CorruptEventError);
    await expect(nodes.host.handle([badInfo])).rejects.toThrow(/node-n-daemon@0: .*\["Changed"\]/s);
    expect(await nodes.store.readStream("workflow-node-reactions")).toEqual([]);
    expect(nodes.ran).toEqual([]);

    const submitted = recordedEvent("job-j-1", exampleEvent("JobSubmitted", "j-1"));
    const jobs = hostOf(jobFlow);
    const { Job: _spec, ...noSpec } = submitted.data as Record<string, unknown>;
    await expect(jobs.host.handle([damaged(submitted, noSpec)])).rejects.toThrow(/job-j-1@0: .*\["Job"\]/s);
    expect(await jobs.store.readStream("workflow-jobs")).toEqual([]);
    expect(jobs.ran).toEqual([]);
  });

  it("a workflow's own step is no input", async () => {
    const { store, ran, host } = hostOf(jobFlow);
    const stored = recordedEvent("job-j-1", exampleEvent("JobSubmitted", "j-1"));
    await host.handle([new EventEnvelope({ ...stored, stream: "workflow-jobs", type: WORKFLOW_STEP_EVENT })]);
    expect(ran).toEqual([]);
    expect(await store.readStream("workflow-jobs")).toEqual([]);
  });
});
