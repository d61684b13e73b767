import { describe, expect, it } from "vitest";
import { CorruptEventError } from "../../../src/events/catalog/event-codec-errors.ts";
import { nodeEvents } from "../../../src/events/catalog/node-event-codec.ts";
import { EventEnvelope } from "../../../src/projections/event-envelope.ts";
import { drainFlow } from "../../../src/workflows/nodes/drain-flow.ts";
import { jobFlow } from "../../../src/workflows/jobs/job-flow.ts";
import { nodeReactions, type NodeWorkQuery } from "../../../src/workflows/nodes/node-reactions.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { countedReads, recordedEvent } from "../../support/recorded-event.ts";
import { workflowSpec } from "../../support/workflow-spec.ts";

/** The workflows are fed the processor host's envelope: its typed event, decoded once for every processor. */

/** Given: n-daemon runs a daemon execution; no node holds other work. */
const daemonOnly: NodeWorkQuery = {
  holdsWork: (id) => id === "n-daemon",
  holdsDaemonWork: (id) => id === "n-daemon",
  mayRunLostWork: () => false,
};

describe("a workflow fed the processor host's envelope", () => {
  it("given a node with daemon work, when its labels change in an envelope a read model already decoded, then a daemon check, with nothing decoded again", () => {
    const { envelope, reads } = countedReads(
      recordedEvent("node-n-daemon", exampleEvent("NodeInfoUpdated", "n-daemon", { Changed: ["Labels"] })),
    );
    // The node read model, ahead of the workflow in the host, decodes it.
    expect(envelope.of(nodeEvents)?.type).toBe("NodeInfoUpdated");
    const decoded = reads();
    workflowSpec(nodeReactions(daemonOnly))
      .when(envelope)
      .then([
        {
          handler: "node-work",
          entityId: "n-daemon",
          type: "CheckDaemonMatch",
          reason: "node n-daemon's labels changed",
        },
      ]);
    expect(reads()).toBe(decoded);
  });

  it("given a node with daemon work, when its info update's data is damaged, then the step stops naming the stream, revision and field: no command on damaged data", () => {
    const stored = recordedEvent("node-n-daemon", exampleEvent("NodeInfoUpdated", "n-daemon"));
    const damaged = new EventEnvelope({ ...stored, data: { ...(stored.data as object), Changed: "Labels" } });
    workflowSpec(nodeReactions(daemonOnly))
      .when(damaged)
      .thenThrows(CorruptEventError, /node-n-daemon@0: .*\["Changed"\]/s);
  });

  it("when a job is submitted with a damaged spec, then the jobs workflow places nothing: the step stops naming the field", () => {
    const stored = recordedEvent("job-j-1", exampleEvent("JobSubmitted", "j-1"));
    const { Job: _job, ...withoutSpec } = stored.data as Record<string, unknown>;
    workflowSpec(jobFlow)
      .when(new EventEnvelope({ ...stored, data: withoutSpec }))
      .thenThrows(CorruptEventError, /job-j-1@0: .*\["Job"\]/s);
    workflowSpec(jobFlow)
      .when(new EventEnvelope(stored))
      .then([{ handler: "job-placement", entityId: "j-1", type: "PlaceJob", reason: "the job was submitted" }]);
  });

  it("when a drain's deadline passes, then one stop per execution its typed data names", () => {
    const left = [
      { ExecutionID: "e-1", JobID: "j-1", JobType: "batch" },
      { ExecutionID: "e-2", JobID: "j-2", JobType: "service" },
    ];
    workflowSpec(drainFlow)
      .when(
        new EventEnvelope(recordedEvent("node-n-1", exampleEvent("NodeDrainDeadlineReached", "n-1", { Left: left }))),
      )
      .then(
        ["e-1", "e-2"].map((entityId) => ({
          handler: "node-drain",
          entityId,
          type: "StopDrainedExecution",
          reason: "the drain deadline of node n-1 passed",
        })),
      );
  });

  it("when the envelope holds a workflow's own step (no entity's event), then nothing: it is no input", () => {
    const step = recordedEvent("node-n-1", exampleEvent("NodeDeleted", "n-1"));
    const own = new EventEnvelope({ ...step, stream: "workflow-node-reactions", type: "WorkflowStepRecorded" });
    for (const workflow of [jobFlow, drainFlow, nodeReactions(daemonOnly)]) workflowSpec(workflow).when(own).then([]);
  });
});
