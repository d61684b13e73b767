import { Schema } from "effect";
import { labelKeyProblem, labelsProblem } from "../../labels/label-rule.ts";
import { ActorType } from "./event-metadata.ts";
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
  Schema.pattern(/^U[A-Z2-7]{55}$/, {
    message: () => "a node's public key is an NATS user nkey: U followed by 55 base32 characters",
  }),
);

/**
 * The node id is bound to a key only the node holds: from now on NATS lets that key speak for
 * this node and no other. `Reinstated`: an operator approved a node whose key a reject revoked.
 */
export const NodeCredentialBound = Schema.Struct({
  NodeID: Schema.String,
  PublicKey: NodePublicKey,
  Reinstated: Schema.Boolean,
});

/** The node's key no longer gets in: an operator rejected or deleted the node. */
export const NodeCredentialRevoked = Schema.Struct({
  NodeID: Schema.String,
  PublicKey: NodePublicKey,
  Reason: Schema.Literal("rejected", "deleted"),
});

/** Who did it, kept in the node's state (as well as in the event's metadata) where the state shows it. */
const By = Schema.Struct({ type: ActorType, id: Schema.String });

/** The node takes no new placements (Kubernetes' cordon, Nomad's ineligible); work on it runs on. */
export const NodeCordoned = Schema.Struct({ NodeID: Schema.String, Reason: Schema.String, By });

/** The node takes placements again. */
export const NodeUncordoned = Schema.Struct({ NodeID: Schema.String, Reason: Schema.String });

const LabelKey = Schema.String.pipe(Schema.filter((key) => labelKeyProblem(key) ?? true, { title: "LabelKey" }));
const OperatorLabels = Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
  Schema.filter((labels) => labelsProblem(labels) ?? true, { title: "Labels" }),
);

/**
 * An operator changed the node's labels from the control plane: `Set` overrides or adds,
 * `Removed` hides labels (the node's own too), `Reset` drops earlier overrides of those keys so
 * that what the node reports shows again. The node's own report is untouched.
 */
export const NodeLabelsSet = Schema.Struct({
  NodeID: Schema.String,
  Set: OperatorLabels,
  Removed: Schema.Array(LabelKey),
  Reset: Schema.Array(LabelKey),
});

/**
 * An operator let this node id in ahead of its registration: it registers APPROVED even under
 * manual approval — only when joining with `PublicKey`, if one is named.
 */
export const NodePreauthorized = Schema.Struct({
  NodeID: Schema.String,
  PublicKey: Schema.optional(NodePublicKey),
  Reason: Schema.String,
  By,
});

export const NodePreauthorizationRevoked = Schema.Struct({ NodeID: Schema.String });
/**
 * An operator drains the node (docs/nodes.md, Drain): it takes no new work, and the drain
 * workflow moves its batch and service work elsewhere, lets ops work finish and stops daemon work
 * at the end unless `KeepDaemon`. `Deadline` is absolute; `By` the operator (`{type, id}`, as a cordon's).
 */
export const NodeDrainStarted = Schema.Struct({
  NodeID: Schema.String,
  Deadline: Time,
  KeepDaemon: Schema.Boolean,
  Reason: Schema.String,
  By,
});

/** Nothing the drain had to move is left on the node; `DaemonStopped` daemon executions were stopped at the end. */
export const NodeDrainCompleted = Schema.Struct({
  NodeID: Schema.String,
  DaemonStopped: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
});

/** One execution a drain's deadline found still on its node. */
export const DrainLeftover = Schema.Struct({
  ExecutionID: Schema.String,
  JobID: Schema.String,
  JobType: Schema.String,
});

/** The drain's deadline passed: `Left` were still on the node and are stopped; the drain ends. */
export const NodeDrainDeadlineReached = Schema.Struct({
  NodeID: Schema.String,
  Deadline: Time,
  Left: Schema.Array(DrainLeftover),
});

/** An operator ended a drain under way, or released a drained node: it takes new work again. */
export const NodeUndrained = Schema.Struct({
  NodeID: Schema.String,
  Previous: Schema.Literal("draining", "drained", "expired"),
});

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
  NodeCordoned,
  NodeUncordoned,
  NodeLabelsSet,
  NodePreauthorized,
  NodePreauthorizationRevoked,
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
