import type { NodeState } from "../../machines/node/node-state.ts";
import type { Health, Membership, NodeInfo, NodeType } from "../events/catalog/node-info.ts";

/**
 * The read model of one node: the node decider's own state (folded by the same evolveNode the
 * actor uses, so the two can never drift) once it has registered, plus its stream revision.
 * Liveness is overlaid by the API.
 */
export interface NodeView extends NodeState {
  readonly nodeType: NodeType;
  readonly info: NodeInfo;
  readonly membership: Membership;
  readonly health: Health;
  readonly registeredAt: string;
  readonly updatedAt: string;
  readonly healthSince: string;
  /** Stream revision of the last event applied: the node's ETag. */
  readonly revision: number;
}

/** The view of a node's state at a revision; undefined while it has never registered. */
export function nodeViewOf(state: NodeState, revision: number): NodeView | undefined {
  const { nodeType, info, membership, health, registeredAt, updatedAt, healthSince } = state;
  if (
    nodeType === undefined ||
    info === undefined ||
    membership === undefined ||
    health === undefined ||
    registeredAt === undefined ||
    updatedAt === undefined ||
    healthSince === undefined
  ) {
    return undefined;
  }
  return { ...state, nodeType, info, membership, health, registeredAt, updatedAt, healthSince, revision };
}
