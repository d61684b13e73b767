import type { ExecutionComputeState, ExistingExecution } from "./placement-request.ts";

/** Bacalhau's compute-terminal states [pkg/models/execution.go]. */
const COMPUTE_TERMINAL: ReadonlySet<ExecutionComputeState> = new Set([
  "Completed",
  "Failed",
  "Cancelled",
  "AskForBidRejected",
  "BidRejected",
]);

/** Bacalhau's discarded states: the execution neither runs nor counts as done. */
const DISCARDED: ReadonlySet<ExecutionComputeState> = new Set([
  "AskForBidRejected",
  "BidRejected",
  "Cancelled",
  "Failed",
]);

/** Terminal as Bacalhau has it: asked to stop, or in a compute-terminal state. */
export function isTerminal(e: ExistingExecution): boolean {
  return e.desiredState === "Stopped" || COMPUTE_TERMINAL.has(e.state);
}

export function isDiscarded(e: ExistingExecution): boolean {
  return DISCARDED.has(e.state);
}
