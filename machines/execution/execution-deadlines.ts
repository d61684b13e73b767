import type { Deadline } from "../decider.ts";
import type { ExecutionCommand } from "./execution-commands.ts";
import type { ExecutionState } from "./execution-state.ts";
import { isExecuting } from "./execution-states.ts";

/**
 * When the orchestrator fails an execution that is still executing: ExecutionTimeout plus the
 * buffer after it began executing (Bacalhau's housekeeping: the node enforces the timeout itself
 * and reports first; this catches a node that does not). Undefined when none applies.
 */
export function executionDeadline(state: ExecutionState): number | undefined {
  if (state.computeState === undefined || !isExecuting(state.computeState)) return undefined;
  if (state.executionTimeout <= 0 || state.executingSince === undefined) return undefined;
  return state.executingSince + (state.executionTimeout + state.timeoutBuffer) * 1000;
}

export function executionDeadlines(state: ExecutionState): readonly Deadline<ExecutionCommand>[] {
  const at = executionDeadline(state);
  return at === undefined ? [] : [{ name: "execution-timeout", at, command: { type: "TimeOutExecution" } }];
}
