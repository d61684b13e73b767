import type { Actor } from "../../src/events/catalog/event-metadata.ts";
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
  /** Who asked (the authenticated operator). */
  readonly by: Actor;
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
export const NODE_STATE_VERSION = 4;

/**
 * Why a node takes no new placements (Kubernetes' `spec.unschedulable`, Nomad's ineligible):
 * work already on it keeps running. Whatever cordons a node (an operator, a drain) says who and why.
 */
export interface NodeCordon {
  readonly reason: string;
  readonly by: Actor;
  readonly since: string;
}

/**
 * An operator's labels over the node's own: a string sets (or overrides) the label, null hides
 * a label the node reports. Keys absent here are the node's.
 */
export type LabelOverrides = Readonly<Record<string, string | null>>;

/** An operator let this node id in ahead of its first registration (APPROVED even under manual approval). */
export interface NodePreauthorization {
  /** When set, only a node joining with this key is let in on the strength of it. */
  readonly publicKey: string | undefined;
  readonly reason: string;
  readonly by: Actor;
  readonly at: string;
}

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
  /** Set while the node is cordoned: it takes no new placements. */
  readonly cordon: NodeCordon | undefined;
  /** The operator's labels over the node's own (effectiveLabels); empty when none. */
  readonly labelOverrides: LabelOverrides;
  /** An operator's pre-authorisation, until revoked or the node is deleted. */
  readonly preauthorization: NodePreauthorization | undefined;
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
    cordon: undefined,
    labelOverrides: NO_OVERRIDES,
    preauthorization: undefined,
  };
}

const NO_OVERRIDES: LabelOverrides = Object.freeze({});

/** The key NATS must let in for this node, if any. */
export function activeCredential(state: NodeState): string | undefined {
  return state.registered && state.credential?.active ? state.credential.publicKey : undefined;
}

/**
 * Whether new work may be placed on the node as far as operators are concerned (membership and
 * health are the scheduler's gate): not while it is cordoned, draining or drained. The scheduler
 * names the two apart (a cordon's reason, a drain's status): candidate-node.ts.
 */
export function isSchedulable(state: Pick<NodeState, "drain" | "cordon">): boolean {
  return state.cordon === undefined && unschedulableReason(state) === undefined;
}

/** Why a drain withholds new work (the scheduler's wording), or undefined when none does. */
export function unschedulableReason(state: Pick<NodeState, "drain">): string | undefined {
  if (state.drain === undefined) return undefined;
  return state.drain.status === "draining" ? "node is draining" : "node is drained";
}
