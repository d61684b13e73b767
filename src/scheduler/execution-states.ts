import { isTerminalComputeState } from "../../machines/execution/execution-states.ts";
import type { ExistingExecution } from "./placement-request.ts";

/** Terminal as Bacalhau has it: asked to stop, or in a compute-terminal state. */
export function isTerminal(e: ExistingExecution): boolean {
  return e.desiredState === "Stopped" || isTerminalComputeState(e.state);
}
