import { describe, expect, it } from "vitest";
import { CorruptEventError } from "../../../src/events/catalog/event-codec-errors.ts";
import { executionEvents } from "../../../src/events/catalog/execution-event-codec.ts";
import { jobEvents } from "../../../src/events/catalog/job-event-codec.ts";
import { nodeEvents } from "../../../src/events/catalog/node-event-codec.ts";
import { EventEnvelope } from "../../../src/projections/event-envelope.ts";
import { countedReads, recordedEvent } from "../../support/recorded-event.ts";

/** The one envelope: every kind's events decoded once, through that kind's codec, and handed out typed. */
describe("EventEnvelope", () => {
  const bid = recordedEvent("execution-e-1", {
    type: "ExecutionBidAccepted",
    data: { ExecutionID: "e-1", NodeID: "n-1", Direct: true },
  });

  it("decodes a job's and an execution's events through their kind's codec, once for every reader", () => {
    const { envelope, reads } = countedReads(bid);
    expect(envelope.of(executionEvents)).toEqual({
      type: "ExecutionBidAccepted",
      data: { ExecutionID: "e-1", NodeID: "n-1", Direct: true },
    });
    const decoding = reads();
    expect(envelope.as("ExecutionBidAccepted")?.data.Direct).toBe(true);
    expect(envelope.event).toBe(envelope.of(executionEvents));
    expect(reads()).toBe(decoding);
    const job = new EventEnvelope(
      recordedEvent("job-j-1", {
        type: "JobStopped",
        data: { JobID: "j-1", Previous: "Running", Reason: "no longer needed" },
      }),
    );
    expect(job.of(jobEvents)?.type).toBe("JobStopped");
  });

  it("hands out nothing of another kind or type, and decodes nothing to say so", () => {
    const { envelope, reads } = countedReads(bid);
    expect(envelope.as("ExecutionCreated")).toBeUndefined();
    expect(envelope.of(jobEvents)).toBeUndefined();
    expect(envelope.of(nodeEvents)).toBeUndefined();
    expect(reads()).toBe(0);
    // A workflow's step: no kind of entity, no domain event.
    const step = new EventEnvelope({ ...bid, stream: "workflow-jobs", type: "WorkflowStepRecorded", data: {} });
    expect(step.event).toBeUndefined();
  });

  it("refuses a stored event its kind's schema rejects, every time it is asked", () => {
    const broken = new EventEnvelope({ ...bid, data: { ExecutionID: "e-1" } });
    expect(() => broken.of(executionEvents)).toThrow(CorruptEventError);
    expect(() => broken.as("ExecutionBidAccepted")).toThrow(CorruptEventError);
  });
});
