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

/**
 * The view of a node's state at a revision; undefined while it has never registered. `info`, when
 * given, replaces the state's (the same info with shared parts: SharedNodeParts). One object
 * literal with every field, not a spread of the state: V8 then keeps all fields in the object,
 * where a spread copy plus a field kept them in a second array (≈ 100 B per node).
 */
/** Whether nodeViewOf makes a view of `state` (it has registered): every field a view needs is there. */
export function hasView(state: NodeState): boolean {
  return (
    state.nodeType !== undefined &&
    state.info !== undefined &&
    state.membership !== undefined &&
    state.health !== undefined &&
    state.registeredAt !== undefined &&
    state.updatedAt !== undefined &&
    state.healthSince !== undefined
  );
}

export function nodeViewOf(
  state: NodeState,
  revision: number,
  info: NodeInfo | undefined = state.info,
  nodeId: string = state.nodeId,
): NodeView | undefined {
  const { nodeType, membership, health, registeredAt, updatedAt, healthSince } = state;
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
  return {
    nodeId,
    registered: state.registered,
    deleted: state.deleted,
    nodeType,
    info,
    membership,
    health,
    lifecycle: state.lifecycle,
    credential: state.credential,
    registeredAt,
    updatedAt,
    healthSince,
    lastHeartbeatAtChange: state.lastHeartbeatAtChange,
    cordon: state.cordon,
    labelOverrides: state.labelOverrides,
    preauthorization: state.preauthorization,
    ...(state.drain === undefined ? {} : { drain: state.drain }),
    revision,
  };
}
