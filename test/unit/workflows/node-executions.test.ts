import { describe, expect, it } from "vitest";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { NODE_DISAPPEARED_MESSAGE, nodeLostMessage } from "../../../src/scheduler/job-outcome.ts";
import { NodeExecutions } from "../../../src/workflows/nodes/node-executions.ts";

const exec = (
  id: string,
  nodeId: string,
  computeState: ExecutionState["computeState"],
  over: Partial<ExecutionState> = {},
): ExecutionState => ({
  ...initialExecutionState(id),
  jobId: "j-1",
  nodeId,
  jobType: "batch",
  computeState,
  desiredState: "Running",
  ...over,
});

describe("each node's executions, as the read model folds them", () => {
  it("knows which nodes hold work under way, and daemon work", () => {
    const index = NodeExecutions.of([
      exec("e1", "n-1", "Running"),
      exec("e2", "n-2", "Completed"),
      exec("e3", "n-3", "New", { jobType: "daemon" }),
      exec("e4", "n-4", "Running", { desiredState: "Stopped" }),
    ]);
    expect(["n-1", "n-2", "n-3", "n-4"].map((n) => index.holdsWork(n))).toEqual([true, false, true, false]);
    expect(["n-1", "n-3"].map((n) => index.holdsDaemonWork(n))).toEqual([false, true]);
    expect([...index.nodesWithWork()].sort()).toEqual(["n-1", "n-3"]);
    // It ends: the node holds nothing any more.
    index.update(exec("e1", "n-1", "Completed"));
    expect(index.holdsWork("n-1")).toBe(false);
    expect(index.underWayOn("n-3").map((e) => e.executionId)).toEqual(["e3"]);
  });

  it("remembers what was lost with a node it watched, until the node is told once", () => {
    const index = NodeExecutions.of([exec("e1", "n-1", "Running"), exec("e2", "n-1", "Running")]);
    index.update(exec("e1", "n-1", "Failed", { computeMessage: nodeLostMessage("n-1", "became UNHEALTHY") }));
    index.update(exec("e2", "n-1", "Failed", { computeMessage: "the command exited with code 3" }));
    expect(index.mayRunLostWork("n-1")).toBe(true);
    expect(index.takeLost("n-1")).toEqual(["e1"]);
    expect(index.mayRunLostWork("n-1")).toBe(false);
    expect(index.takeLost("n-1")).toEqual([]);
  });

  it("after a restart, seeds the executions lost with nodes that are not back yet", () => {
    const past = [
      exec("e1", "n-away", "Failed", { computeMessage: nodeLostMessage("n-away", "became UNKNOWN") }),
      exec("e2", "n-back", "Failed", { computeMessage: nodeLostMessage("n-back", "became UNHEALTHY") }),
      exec("e3", "n-gone", "Failed", { computeMessage: NODE_DISAPPEARED_MESSAGE }),
    ];
    const index = NodeExecutions.of(past);
    expect(index.mayRunLostWork("n-away")).toBe(false);
    index.seedLost(past, (nodeId) => nodeId === "n-back");
    expect(["n-away", "n-back", "n-gone"].map((n) => index.mayRunLostWork(n))).toEqual([true, false, true]);
  });
});
