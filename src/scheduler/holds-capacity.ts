import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import { isTerminal } from "./execution-states.ts";

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
