import type { ComputeStateName } from "../../src/events/catalog/execution-events.ts";

export type { ComputeStateName };

/**
 * Bacalhau's ExecutionStateType, v1.6/1.7 numbering: the index is the integer its API serializes
 * (ComputeState.StateType). Publishing is Bacalhau's and never reached in Shoal (no publishers).
 */
export const COMPUTE_STATES = [
  "Undefined",
  "New",
  "AskForBid",
  "AskForBidAccepted",
  "AskForBidRejected",
  "BidAccepted",
  "Running",
  "Publishing",
  "BidRejected",
  "Completed",
  "Failed",
  "Cancelled",
] as const;

/** Bacalhau's ExecutionDesiredStateType: the index is the integer its API serializes. */
export const DESIRED_STATES = ["Pending", "Running", "Stopped"] as const;
export type DesiredStateName = (typeof DESIRED_STATES)[number];

export const computeStateNumber = (s: ComputeStateName): number => COMPUTE_STATES.indexOf(s);
export const desiredStateNumber = (s: DesiredStateName): number => DESIRED_STATES.indexOf(s);

/** Bacalhau's IsTerminalComputeState: nothing changes an execution after these. */
export const isTerminalComputeState = (s: ComputeStateName): boolean =>
  s === "Completed" || s === "Failed" || s === "Cancelled" || s === "AskForBidRejected" || s === "BidRejected";

/** Bacalhau's IsExecuting: the node holds resources for it and its ExecutionTimeout runs. */
export const isExecuting = (s: ComputeStateName): boolean =>
  s === "BidAccepted" || s === "Running" || s === "Publishing";

/** Bacalhau's IsDiscarded: ended without a result (a retry may replace it; its node ranks lower). */
export const isDiscarded = (s: ComputeStateName): boolean =>
  s === "AskForBidRejected" || s === "BidRejected" || s === "Cancelled" || s === "Failed";
