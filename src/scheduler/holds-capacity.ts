import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import type { Allocation } from "./capacity-ledger.ts";
import { isTerminal } from "./execution-states.ts";
import { fromBacalhauResources } from "./resources.ts";

/**
 * An execution as placement and the read model count it: under way on its node, holding its allocated resources, while
 * it is not terminal.
 */
export function holdsCapacity(e: ExecutionState): boolean {
  return (
    e.computeState !== undefined &&
    !isTerminal({
      id: e.executionId,
      nodeId: e.nodeId,
      state: e.computeState,
      desiredState: e.desiredState ?? "Pending",
    })
  );
}

/** What an execution holds on its node while it holds capacity. */
export function allocationOf(e: ExecutionState): Allocation {
  return { nodeId: e.nodeId, resources: fromBacalhauResources(e.allocatedResources) };
}
