import type { Health, Membership, NodeInfo, NodeType } from "../../src/events/catalog/node-info.ts";

export interface NodeCredential {
  readonly publicKey: string;
  /** False after a reject revoked it; an approve reinstates it. */
  readonly active: boolean;
}

/**
 * An operator's drain of the node (NodeDrainStarted): while `draining`, the drain workflow moves
 * its work elsewhere; once ended (`drained`, or `expired` when the deadline stopped what was left)
 * the node stays unschedulable until an operator undrains it, as Kubernetes leaves a drained node
 * cordoned and Nomad leaves it ineligible.
 */
export interface NodeDrain {
  readonly status: "draining" | "drained" | "expired";
  /** ISO-8601: when whatever is left is stopped (from the host's clock at the command). */
  readonly deadline: string;
  /** Daemon executions stay (Nomad's IgnoreSystemJobs, kubectl's --ignore-daemonsets). */
  readonly keepDaemon: boolean;
  readonly reason: string;
  /** Who asked: `operator:<id>`. */
  readonly by: string;
  readonly startedAt: string;
  readonly endedAt?: string;
  /** How many executions the deadline stopped (status `expired`). */
  readonly left?: number;
}

/**
 * The shape of NodeState below (and of what evolveNode folds into it). Bump it whenever either
 * changes: a node-state snapshot written under another version is ignored and the streams are
 * replayed in full (src/snapshots/).
 */
export const NODE_STATE_VERSION = 2;

/**
 * One node as its stored events describe it: what the actor decides on and what the read
 * model serves (liveness — heartbeats and resources — is transient and kept elsewhere).
 */
export interface NodeState {
  readonly nodeId: string;
  /** In the cluster now: registered and not deleted since. */
  readonly registered: boolean;
  /** Was registered, then deleted: only its history (and this state, for look-ups) is left. */
  readonly deleted: boolean;
  readonly nodeType: NodeType | undefined;
  readonly info: NodeInfo | undefined;
  readonly membership: Membership | undefined;
  readonly health: Health | undefined;
  /** How many times this node has registered: a delete ends a lifecycle, the next register starts one. */
  readonly lifecycle: number;
  /** The key bound to this node id, if any. */
  readonly credential: NodeCredential | undefined;
  readonly registeredAt: string | undefined;
  readonly updatedAt: string | undefined;
  /** When health last changed (or registration): Bacalhau's ConnectedSince / DisconnectedSince. */
  readonly healthSince: string | undefined;
  /** LastHeartbeat carried by the last UNHEALTHY/UNKNOWN event. */
  readonly lastHeartbeatAtChange: string | null;
  /** The operator's drain, from NodeDrainStarted until an undrain; undefined for a node never drained. */
  readonly drain?: NodeDrain;
}

export function initialNodeState(nodeId: string): NodeState {
  return {
    nodeId,
    registered: false,
    deleted: false,
    nodeType: undefined,
    info: undefined,
    membership: undefined,
    health: undefined,
    lifecycle: 0,
    credential: undefined,
    registeredAt: undefined,
    updatedAt: undefined,
    healthSince: undefined,
    lastHeartbeatAtChange: null,
  };
}

/** The key NATS must let in for this node, if any. */
export function activeCredential(state: NodeState): string | undefined {
  return state.registered && state.credential?.active ? state.credential.publicKey : undefined;
}

/**
 * Whether new work may be placed on the node as far as operators are concerned (membership and
 * health are the scheduler's gate): not while it is draining or drained. The one predicate every
 * operator control that withholds placements feeds (cordon adds its flag here).
 */
export function isSchedulable(state: Pick<NodeState, "drain">): boolean {
  return unschedulableReason(state) === undefined;
}

/** Why the node takes no new work (the scheduler's wording), or undefined when it may. */
export function unschedulableReason(state: Pick<NodeState, "drain">): string | undefined {
  if (state.drain === undefined) return undefined;
  return state.drain.status === "draining" ? "node is draining" : "node is drained";
}
