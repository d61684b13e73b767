import type { ExecutionState } from "../../../machines/execution/execution-state.ts";

/**
 * The work message an execution's node is still due, or undefined when it is due none: a batch
 * or service execution still New (desired Pending) is asked for its bid; one approved (desired
 * Running) is told to run until the node reports it Running; an ops or daemon execution (created
 * desired Running: a direct bid) is told to run from the start. Pure.
 */
export function workToSend(
  execution: Pick<ExecutionState, "computeState" | "desiredState">,
): "AskForBid" | "RunExecution" | undefined {
  const { computeState, desiredState } = execution;
  if (desiredState === "Pending") return computeState === "New" ? "AskForBid" : undefined;
  if (desiredState === "Running")
    return computeState === "New" || computeState === "BidAccepted" ? "RunExecution" : undefined;
  return undefined;
}
