import type { NodeDrain } from "../node/node-state.ts";
import type { DrainCancel, DrainedExecution } from "./drained-execution.ts";

/**
 * An operator ended a drain under way: a service partition with both its original (on the node) and a replacement
 * keeps one — the replacement when it already runs (the move is done), else the original (the replacement is
 * cancelled). Nothing when the node is drained again by then (`drain`: the node's drain now). Batch work the drain
 * stopped stays stopped: its partitions run elsewhere.
 */
export function settleUndrained(
  nodeId: string,
  drain: NodeDrain | undefined,
  executions: readonly DrainedExecution[],
): DrainCancel[] {
  if (drain !== undefined) return [];
  const cancel: DrainCancel[] = [];
  for (const { execution: e, replacement } of executions) {
    if (e.jobType !== "service" || replacement === undefined) continue;
    if (replacement.computeState === "Running")
      cancel.push({
        execution: e,
        reason: `the drain of node ${nodeId} ended; ${replacement.executionId} on node ${replacement.nodeId} already runs in its place`,
      });
    else
      cancel.push({
        execution: replacement,
        reason: `the drain of node ${nodeId} ended: the replacement of ${e.executionId} is not needed`,
      });
  }
  return cancel;
}
