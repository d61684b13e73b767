import { describe, expect, it } from "vitest";
import { executionRefusals } from "../../../src/cli/execution-refusals.ts";
import type { ExecutionJson } from "../../../src/cli/job-shapes.ts";
import { computeStateNumber, type ComputeStateName } from "../../../machines/execution/execution-states.ts";

const execution = (id: string, state: ComputeStateName, message: string, createTime: number): ExecutionJson =>
  ({
    ID: `e-${id}-0000-4000-8000-000000000000`,
    NodeID: "edge-1",
    CreateTime: createTime,
    ComputeState: { StateType: computeStateNumber(state), Message: message },
  }) as unknown as ExecutionJson;

describe("why a followed job's executions ended without their work done (job run -f)", () => {
  it("the node's own reason for each refused or failed execution, oldest first; others left out", () => {
    const allowList = "volume /data is not allow-listed (verify the node's Compute.AllowListedLocalPaths)";
    expect(
      executionRefusals([
        execution("00000003", "Failed", "exited with code 3", 3),
        execution("00000001", "AskForBidRejected", allowList, 1),
        execution("00000002", "Completed", "", 2),
        execution("00000004", "BidRejected", "", 4),
        execution("00000005", "Cancelled", "stopped by a rerun", 5),
        execution("00000006", "BidRejected", "rejected\u001b[2J", 6),
      ]),
    ).toEqual([
      `Execution e-00000001 on node edge-1 AskForBidRejected: ${allowList}`,
      "Execution e-00000003 on node edge-1 Failed: exited with code 3",
      "Execution e-00000006 on node edge-1 BidRejected: rejected\\u001b[2J",
    ]);
  });
});
