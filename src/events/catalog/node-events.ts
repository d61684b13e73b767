import { Schema } from "effect";
import { Health, Membership, NodeType, StoredNodeInfo } from "./node-info.ts";

const Time = Schema.String; // ISO-8601, supplied by the actor host's clock
/** null: no heartbeat since this orchestrator started (the node was silent through the restart grace). */
const LastHeartbeat = Schema.NullOr(Time);

/** A node enters the cluster (or re-enters after a delete: a new lifecycle in the same stream). */
export const NodeRegistered = Schema.Struct({
  NodeID: Schema.String,
  NodeType,
  Info: StoredNodeInfo,
  Membership: Schema.Literal("PENDING", "APPROVED"),
  Lifecycle: Schema.Number.pipe(Schema.int(), Schema.positive()),
});

export const NodeApproved = Schema.Struct({ NodeID: Schema.String, Previous: Membership });
export const NodeRejected = Schema.Struct({ NodeID: Schema.String, Previous: Membership });
export const NodeDeleted = Schema.Struct({ NodeID: Schema.String, Membership });

export const NodeInfoUpdated = Schema.Struct({
  NodeID: Schema.String,
  Info: StoredNodeInfo,
  /** Top-level NodeInfo fields that differ from the previous info, for auditors. */
  Changed: Schema.Array(Schema.String),
});

export const NodeBecameUnhealthy = Schema.Struct({
  NodeID: Schema.String,
  LastHeartbeat,
  DisconnectTimeoutMs: Schema.Number,
});

export const NodeBecameUnknown = Schema.Struct({
  NodeID: Schema.String,
  LastHeartbeat,
  UnknownTimeoutMs: Schema.Number,
});

export const NodeBecameHealthy = Schema.Struct({ NodeID: Schema.String, Previous: Health });

/** An NATS nkey public key (a user key: `U` and 55 base32 characters). */
export const NodePublicKey = Schema.String.pipe(
  Schema.pattern(/^U[A-Z2-7]{55}$/, { message: () => "a node's public key is an NATS user nkey: U followed by 55 base32 characters" }),
);

/**
 * The node id is bound to a key only the node holds: from now on NATS lets that key speak for
 * this node and no other. `Reinstated`: an operator approved a node whose key a reject revoked.
 */
export const NodeCredentialBound = Schema.Struct({ NodeID: Schema.String, PublicKey: NodePublicKey, Reinstated: Schema.Boolean });

/** The node's key no longer gets in: an operator rejected or deleted the node. */
export const NodeCredentialRevoked = Schema.Struct({ NodeID: Schema.String, PublicKey: NodePublicKey, Reason: Schema.Literal("rejected", "deleted") });

/**
 * An operator drains the node (docs/nodes.md, Drain): it takes no new work, and the drain
 * workflow moves its batch and service work elsewhere, lets ops work finish and stops daemon work
 * at the end unless `KeepDaemon`. `Deadline` is absolute; `By` the operator (`operator:<id>`).
 */
export const NodeDrainStarted = Schema.Struct({
  NodeID: Schema.String,
  Deadline: Time,
  KeepDaemon: Schema.Boolean,
  Reason: Schema.String,
  By: Schema.String,
});

/** Nothing the drain had to move is left on the node; `DaemonStopped` daemon executions were stopped at the end. */
export const NodeDrainCompleted = Schema.Struct({ NodeID: Schema.String, DaemonStopped: Schema.Number.pipe(Schema.int(), Schema.nonNegative()) });

/** One execution a drain's deadline found still on its node. */
export const DrainLeftover = Schema.Struct({ ExecutionID: Schema.String, JobID: Schema.String, JobType: Schema.String });

/** The drain's deadline passed: `Left` were still on the node and are stopped; the drain ends. */
export const NodeDrainDeadlineReached = Schema.Struct({ NodeID: Schema.String, Deadline: Time, Left: Schema.Array(DrainLeftover) });

/** An operator ended a drain under way, or released a drained node: it takes new work again. */
export const NodeUndrained = Schema.Struct({ NodeID: Schema.String, Previous: Schema.Literal("draining", "drained", "expired") });

export const NODE_EVENT_SCHEMAS = {
  NodeRegistered,
  NodeApproved,
  NodeRejected,
  NodeDeleted,
  NodeInfoUpdated,
  NodeBecameUnhealthy,
  NodeBecameUnknown,
  NodeBecameHealthy,
  NodeCredentialBound,
  NodeCredentialRevoked,
  NodeDrainStarted,
  NodeDrainCompleted,
  NodeDrainDeadlineReached,
  NodeUndrained,
} as const;

export type NodeEventType = keyof typeof NODE_EVENT_SCHEMAS;
export const NODE_EVENT_TYPES = Object.keys(NODE_EVENT_SCHEMAS) as NodeEventType[];

/** A node event as the domain sees it: its type and its data. */
export type NodeEvent = {
  [T in NodeEventType]: { readonly type: T; readonly data: (typeof NODE_EVENT_SCHEMAS)[T]["Type"] };
}[NodeEventType];

export type NodeEventOf<T extends NodeEventType> = Extract<NodeEvent, { type: T }>;
