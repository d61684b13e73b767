import { describe, expect, it } from "vitest";
import { isReplacementOf } from "../../../../machines/drain/replacement-of.ts";
import { initialExecutionState, type ExecutionState } from "../../../../machines/execution/execution-state.ts";

/** Which execution a drain takes for the replacement of a service's execution on the draining node. */
const service = (id: string, nodeId: string, over: Partial<ExecutionState> = {}): ExecutionState => ({
  ...initialExecutionState(id),
  jobId: "j-1",
  nodeId,
  jobType: "service",
  jobVersion: 2,
  partitionIndex: 0,
  computeState: "Running",
  desiredState: "Running",
  ...over,
});

describe("the replacement of a service execution on a draining node", () => {
  const drained = service("e-drained", "n-draining");

  it("is the same partition under way on another node, of the same version or a later one", () => {
    expect(isReplacementOf(service("e-other", "n-2"), drained)).toBe(true);
    expect(isReplacementOf(service("e-later", "n-2", { jobVersion: 3 }), drained)).toBe(true);
  });

  it("is never an earlier version's execution: the update stops that one, leaving the partition with none", () => {
    expect(isReplacementOf(service("e-v1", "n-2", { jobVersion: 1 }), drained)).toBe(false);
  });

  it("is not itself, another partition's, another job's, one on the same node, or one that ended", () => {
    expect(isReplacementOf(drained, drained)).toBe(false);
    expect(isReplacementOf(service("e-p1", "n-2", { partitionIndex: 1 }), drained)).toBe(false);
    expect(isReplacementOf(service("e-j2", "n-2", { jobId: "j-2" }), drained)).toBe(false);
    expect(isReplacementOf(service("e-same", "n-draining"), drained)).toBe(false);
    expect(
      isReplacementOf(service("e-done", "n-2", { desiredState: "Stopped", computeState: "Cancelled" }), drained),
    ).toBe(false);
  });
});
