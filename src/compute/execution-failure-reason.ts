import type { ExecutionEndReason } from "./executor/executor.ts";

/**
 * Why an execution failed on this node, as /metrics counts it: a closed set (never an error's text, whose values are
 * unbounded). The executor's end reasons but a cancel, and `non-zero-exit` for a command that exited non-zero; `lost`
 * for one whose container was gone after a restart; `refused` for work the node would not run when it came;
 * `publish-failed` for one that completed but whose results the node could not publish.
 */
export const EXECUTION_FAILURE_REASONS = [
  "non-zero-exit",
  "timeout",
  "oom-killed",
  "image-missing",
  "input-failed",
  "rejected-by-engine",
  "engine-failed",
  "lost",
  "refused",
  "publish-failed",
] as const;
export type ExecutionFailureReason = (typeof EXECUTION_FAILURE_REASONS)[number];

/** The executor's reason for a failed execution's end, in the closed set (a new end reason fails to compile here). */
export const failureReasonOf = (reason: Exclude<ExecutionEndReason, "cancelled">): ExecutionFailureReason =>
  reason === "exited" ? "non-zero-exit" : reason;

/** Told what happens to the node's executions (the node's /metrics counts them). */
export interface ExecutionObserver {
  /** A container started (not one adopted after a restart). */
  containerStarted(): void;
  executionFailed(reason: ExecutionFailureReason): void;
}
