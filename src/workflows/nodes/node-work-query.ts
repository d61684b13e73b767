import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { ExecutionsByNode } from "../../projections/jobs/executions-by-node.ts";
import type { NodeWorkQuery } from "./node-reactions.ts";

/**
 * The node-reactions' question about a node's work, answered by the job read model's index (`byNode`) and, for
 * executions under way, those placed on it just now that the read model does not show yet (`placedJustNowOn`, the job
 * runner's): a node that goes silent right after a placement still holds that work.
 */
export function nodeWorkQuery(
  byNode: Pick<ExecutionsByNode, "holdsWork" | "holdsDaemonWork" | "mayRunLostWork">,
  placedJustNowOn: (nodeId: string) => readonly ExecutionState[],
): NodeWorkQuery {
  return {
    holdsWork: (nodeId) => byNode.holdsWork(nodeId) || placedJustNowOn(nodeId).length > 0,
    holdsDaemonWork: (nodeId) =>
      byNode.holdsDaemonWork(nodeId) || placedJustNowOn(nodeId).some((e) => e.jobType === "daemon"),
    mayRunLostWork: (nodeId, at) => byNode.mayRunLostWork(nodeId, at),
  };
}
