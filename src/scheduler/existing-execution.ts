import { endedUnanswered } from "../../machines/execution/execution-deadlines.ts";
import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import type { ExistingExecution } from "./placement-request.ts";

/** An execution's state as placement counts it (a service's leaving a draining node is the caller's to mark). */
export const toExisting = (e: ExecutionState): ExistingExecution => ({
  id: e.executionId,
  nodeId: e.nodeId,
  state: e.computeState ?? "New",
  desiredState: e.desiredState ?? "Pending",
  partitionIndex: e.partitionIndex,
  ...(endedUnanswered(e) ? { unanswered: true } : {}),
  ...(e.computeState === "AskForBidRejected" && e.computeMessage !== "" ? { refusal: e.computeMessage } : {}),
});
