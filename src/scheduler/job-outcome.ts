import { isTerminal } from "./execution-states.ts";
import { remainingPartitionCount } from "./place-job.ts";
import type { ExistingExecution, JobType } from "./placement-request.ts";

/** Bacalhau's message for an ops job one of whose executions failed [pkg/orchestrator/events.go]. */
export const EXECUTIONS_FAILED_MESSAGE = "Job failed because one or more executions failed";

/** Bacalhau's message for an execution whose node is gone from the node store [pkg/orchestrator/events.go]. */
export const NODE_DISAPPEARED_MESSAGE = "Execution stop requested because node has disappeared";

/**
 * Where a job stands by its executions, as Bacalhau's schedulers judge it after placing what was
 * missing: `open` while it still runs (or waits for a retry); `completed`; `failed` naming the
 * failed execution that decides it.
 */
export type JobOutcome =
  | { readonly kind: "open" }
  | { readonly kind: "completed" }
  | { readonly kind: "failed"; readonly failed: ExistingExecution };

/** The distinct partitions (0..count-1) that have a Completed execution. */
export function completedPartitions(count: number, executions: readonly ExistingExecution[]): number {
  const done = new Set<number>();
  let unindexed = 0;
  for (const e of executions) {
    if (e.state !== "Completed") continue;
    if (e.partitionIndex === undefined) unindexed++;
    else if (e.partitionIndex >= 0 && e.partitionIndex < count) done.add(e.partitionIndex);
  }
  return Math.min(count, done.size + unindexed);
}

/**
 * - batch: completed once every partition has a Completed execution (Bacalhau's isJobComplete); a
 *   failed partition is retried, so failures alone never end it (placement fails it when no node
 *   is left).
 * - ops: once nothing is left that is not terminal, Failed if any execution failed, else Completed
 *   (Bacalhau's ops scheduler; a refused bid or a cancel is no failure).
 * - service and daemon: never end on their own.
 */
export function jobOutcome(type: JobType, count: number, executions: readonly ExistingExecution[]): JobOutcome {
  switch (type) {
    case "batch":
      return executions.length > 0 && completedPartitions(count, executions) >= count
        ? { kind: "completed" }
        : { kind: "open" };
    case "ops": {
      if (executions.length === 0 || executions.some((e) => !isTerminal(e))) return { kind: "open" };
      const failed = executions.find((e) => e.state === "Failed");
      return failed === undefined ? { kind: "completed" } : { kind: "failed", failed };
    }
    default:
      return { kind: "open" };
  }
}

/**
 * Whether placing the job again may create anything: a batch or service job with a partition no
 * execution holds (a failed one to retry, or one never placed), and every ops or daemon job (a node
 * may have come that has no execution of it yet).
 */
export function wantsPlacement(type: JobType, count: number, executions: readonly ExistingExecution[]): boolean {
  if (type === "ops" || type === "daemon") return true;
  return remainingPartitionCount(type, count, executions) > 0;
}

/**
 * Which try of its partition (batch, service) or node (ops, daemon) a new execution is: how many
 * executions it already had. With the job's id and the partition or node it makes the execution's
 * id, so that a retry gets a new id and a replayed placement the same one.
 */
export function attemptOf(
  type: JobType,
  executions: readonly ExistingExecution[],
  placement: { readonly nodeId: string; readonly partitionIndex?: number },
): number {
  if (type === "ops" || type === "daemon" || placement.partitionIndex === undefined)
    return executions.filter((e) => e.nodeId === placement.nodeId).length;
  return executions.filter((e) => (e.partitionIndex ?? 0) === placement.partitionIndex).length;
}

/** How a message of an execution lost with its node begins (nodeLostMessage). */
const LOST_PREFIX = "Execution lost: node ";
/**
 * How a message of a daemon execution stopped for its node's sake begins: it no longer matches (nodeUnmatchedMessage),
 * or is drained (nodeDrainedMessage).
 */
const UNMATCHED_PREFIX = "Execution stopped: node ";

/** The failure of an execution lost with its node: `Execution lost: node n-1 became UNHEALTHY`. */
export function nodeLostMessage(nodeId: string, why: string): string {
  return `${LOST_PREFIX}${nodeId} ${why}`;
}

/** A daemon execution stopped because its node's labels changed so that the job no longer matches it. */
export function nodeUnmatchedMessage(nodeId: string, change: string): string {
  return `${UNMATCHED_PREFIX}${nodeId} no longer matches the job's constraints (${change})`;
}

/** A daemon execution a node's drain stopped at its end: the node, undrained, gets a new one. */
export function nodeDrainedMessage(nodeId: string): string {
  return `${UNMATCHED_PREFIX}${nodeId} is drained: its daemon work stops at the end`;
}

/**
 * Whether an ended execution leaves its node free for another of its daemon job: it was lost with
 * the node (unhealthy, rejected, deleted), stopped because the node stopped matching, or stopped
 * by the node's drain, not failed by its own doing. A node that recovers, matches again or is
 * undrained gets a new execution of the job.
 */
export function releasesNode(computeMessage: string): boolean {
  return (
    computeMessage.startsWith(LOST_PREFIX) ||
    computeMessage.startsWith(UNMATCHED_PREFIX) ||
    computeMessage === NODE_DISAPPEARED_MESSAGE
  );
}

/**
 * Whether an execution's failure says it was lost with its node (and the node may still run it, should it come back).
 */
export function lostWithNode(computeMessage: string): boolean {
  return computeMessage.startsWith(LOST_PREFIX) || computeMessage === NODE_DISAPPEARED_MESSAGE;
}
