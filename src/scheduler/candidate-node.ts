import { unschedulableReason, type NodeState } from "../../machines/node/node-state.ts";
import type { Health, Membership, NodeInfo, NodeType } from "../events/catalog/node-info.ts";
import { nodeLabels } from "../labels/node-labels.ts";
import type { CandidateNode } from "./placement-request.ts";
import { fromBacalhauResources, isZeroResources } from "./resources.ts";

/**
 * The stored facts of a registered node that placement reads: the node read model's entry
 * (NodeView) is one, so placement needs no read model, only its shape.
 */
export interface NodeFacts extends Pick<NodeState, "nodeId" | "labelOverrides" | "drain"> {
  readonly nodeType: NodeType;
  readonly info: NodeInfo;
  readonly membership: Membership;
  readonly health: Health;
  readonly cordon: { readonly reason: string } | undefined;
}

/**
 * A node as placement sees it. A node that reports no MaxJobRequirements has none (Bacalhau would
 * refuse every job with resources on it; Shoal checks free capacity anyway).
 */
export function candidateNodeOf(node: NodeFacts): CandidateNode {
  // Node views are immutable (a change makes a new one): each is made a candidate once, not at every placement.
  let candidate = candidates.get(node);
  if (candidate === undefined) candidates.set(node, (candidate = candidateOf(node)));
  return candidate;
}

const candidates = new WeakMap<NodeFacts, CandidateNode>();

function candidateOf(node: NodeFacts): CandidateNode {
  const compute = node.info.ComputeNodeInfo;
  const maxJob = fromBacalhauResources(compute?.MaxJobRequirements ?? {});
  const unschedulable = unschedulableReason(node);
  return {
    id: node.nodeId,
    type: node.nodeType,
    membership: node.membership,
    health: node.health,
    // The node's own labels overlaid by the operator's: what constraints and daemon matching see.
    labels: nodeLabels(node),
    engines: compute?.ExecutionEngines ?? [],
    // A node from before results advertises no Publishers, and would run the task and drop its results: it gets
    // no job that names a publisher, rather than being taken to have `local`.
    ...((compute?.Publishers ?? []).length === 0 ? {} : { publishers: compute?.Publishers }),
    ...((compute?.StorageSources ?? []).length === 0 ? {} : { storageSources: compute?.StorageSources }),
    capacity: fromBacalhauResources(compute?.MaxCapacity ?? {}),
    ...(isZeroResources(maxJob) ? {} : { maxJobRequirements: maxJob }),
    ...(node.cordon === undefined ? {} : { cordoned: { reason: node.cordon.reason } }),
    ...(unschedulable === undefined ? {} : { unschedulable }),
  };
}
