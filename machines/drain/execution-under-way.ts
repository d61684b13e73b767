import type { ExecutionState } from "../execution/execution-state.ts";
import { isTerminalComputeState } from "../execution/execution-states.ts";

/**
 * Whether an execution still holds its node, as a drain counts it: created, not asked to stop and not in a terminal
 * compute state (Bacalhau's IsTerminal, src/scheduler/execution-states.ts, on the actor's state).
 */
export function isUnderWay(e: ExecutionState): boolean {
  return e.computeState !== undefined && e.desiredState !== "Stopped" && !isTerminalComputeState(e.computeState);
}
