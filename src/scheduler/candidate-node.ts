import { unschedulableReason } from "../../machines/node/node-state.ts";
import { viewLabels, type NodeView } from "../projections/node-view.ts";
import type { CandidateNode } from "./placement-request.ts";
import { fromBacalhauResources, isZeroResources } from "./resources.ts";

/**
 * A node read-model entry as placement sees it. A node that reports no MaxJobRequirements has
 * none (Bacalhau would refuse every job with resources on it; Shoal checks free capacity anyway).
 */
export function candidateNodeOf(view: NodeView): CandidateNode {
  // Views are immutable (a change makes a new one): each is made a candidate once, not at every placement.
  let candidate = candidates.get(view);
  if (candidate === undefined) candidates.set(view, (candidate = candidateOf(view)));
  return candidate;
}

const candidates = new WeakMap<NodeView, CandidateNode>();

function candidateOf(view: NodeView): CandidateNode {
  const compute = view.info.ComputeNodeInfo;
  const maxJob = fromBacalhauResources(compute?.MaxJobRequirements ?? {});
  const unschedulable = unschedulableReason(view);
  return {
    id: view.nodeId,
    type: view.nodeType,
    membership: view.membership,
    health: view.health,
    // The node's own labels overlaid by the operator's: what constraints and daemon matching see.
    labels: viewLabels(view),
    engines: compute?.ExecutionEngines ?? [],
    capacity: fromBacalhauResources(compute?.MaxCapacity ?? {}),
    ...(isZeroResources(maxJob) ? {} : { maxJobRequirements: maxJob }),
    ...(view.cordon === undefined ? {} : { cordoned: { reason: view.cordon.reason } }),
    ...(unschedulable === undefined ? {} : { unschedulable }),
  };
}
