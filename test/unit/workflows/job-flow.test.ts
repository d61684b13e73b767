import { describe, expect, it } from "vitest";
import { entityIdOf } from "../../../src/events/streams.ts";
import type { DomainEvent } from "../../../src/projections/event-envelope.ts";
import { isNodeGain, jobFlow } from "../../../src/workflows/jobs/job-flow.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { workflowInput } from "../../support/workflow-input.ts";

const react = (stream: string, type: DomainEvent["type"]) =>
  jobFlow.react(workflowInput(stream, exampleEvent(type, entityIdOf(stream)))).map((c) => `${c.type} ${c.entityId}`);

describe("the jobs workflow: which event calls for what", () => {
  it.each([
    ["job-j-1", "JobSubmitted", ["PlaceJob j-1"]],
    ["job-j-1", "JobStopped", ["CancelExecutions j-1"]],
    ["job-j-1", "JobFailed", ["CancelExecutions j-1"]],
    ["job-j-1", "JobCompleted", []],
    ["job-j-1", "JobStarted", []],
    // Every end of an execution has its job evaluated again: completion, a retry, an ops job's end; and its capacity is
    // free.
    ["execution-e-1", "ExecutionFailed", ["SettleJob e-1", "PlaceQueuedJobs e-1"]],
    ["execution-e-1", "ExecutionCompleted", ["SettleJob e-1", "PlaceQueuedJobs e-1"]],
    ["execution-e-1", "ExecutionCancelled", ["SettleJob e-1", "PlaceQueuedJobs e-1"]],
    ["execution-e-1", "ExecutionBidDeclined", ["SettleJob e-1", "PlaceQueuedJobs e-1"]],
    ["execution-e-1", "ExecutionRejected", ["SettleJob e-1", "PlaceQueuedJobs e-1"]],
    ["execution-e-1", "ExecutionStarted", []],
    // Node events are no steps of this workflow: gains are handled beside it, losses by node-reactions.
    ["node-n-1", "NodeDeleted", []],
    ["node-n-1", "NodeRegistered", []],
  ] as const)("%s %s → %j", (stream, type, commands) => {
    expect(react(stream, type)).toEqual(commands);
  });

  it("records an approval step for an asked bid (batch, service), none for a direct one (ops, daemon)", () => {
    const bid = (data: { ExecutionID: string; NodeID: string; Direct?: boolean }) =>
      jobFlow.react(workflowInput("execution-e-1", { type: "ExecutionBidAccepted", data })).map((c) => c.type);
    expect(bid({ ExecutionID: "e-1", NodeID: "n-1" })).toEqual(["ApproveBids"]);
    expect(bid({ ExecutionID: "e-1", NodeID: "n-1", Direct: true })).toEqual([]);
  });

  it("tells a node's gain", () => {
    expect(isNodeGain("node-n-1", "NodeRegistered")).toBe(true);
    expect(isNodeGain("node-n-1", "NodeBecameHealthy")).toBe(true);
    expect(isNodeGain("node-n-1", "NodeInfoUpdated")).toBe(true);
    expect(isNodeGain("node-n-1", "NodeBecameUnhealthy")).toBe(false);
    expect(isNodeGain("node-n-1", "NodeDeleted")).toBe(false);
  });
});
