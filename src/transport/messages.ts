import { Schema } from "effect";
import { NodePublicKey } from "../events/catalog/node-events.ts";
import { NodeId, NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";

const MessageID = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128));

/**
 * A node's first message: its info and the public key it will connect with from now on, with
 * `Proof` = HMAC-SHA256 of the join token and `Signature` = the node key's signature over the
 * same statement (src/transport/join-proof.ts). The token itself never travels.
 */
export const JoinRequest = Schema.Struct({
  MessageID,
  Info: NodeInfo,
  PublicKey: NodePublicKey,
  Proof: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9_-]{43}$/, { message: () => "Proof must be a base64url HMAC-SHA256" }),
  ),
  /** The same statement signed with the node's key (ed25519, base64url): the joiner holds that key. */
  Signature: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9_-]{86}$/, { message: () => "Signature must be a base64url ed25519 signature" }),
  ),
  /**
   * Only if the node is still registered: an agent whose login NATS revoked asks again this way,
   * so a rejected node that was approved gets a new login while a deleted one is not registered
   * anew (it is told NotFound; its agent joins again when restarted).
   */
  Rejoin: Schema.optional(Schema.Boolean),
});
/**
 * Bacalhau's heartbeat: `{NodeID, Sequence}`, published. `MessageID` is optional: older agents
 * send one (as a request), and it then becomes the causation id of a NodeBecameHealthy it causes.
 */
export const HeartbeatRequest = Schema.Struct({
  MessageID: Schema.optional(MessageID),
  NodeID: NodeId,
  Sequence: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
});
export const UpdateInfoRequest = Schema.Struct({ MessageID, Info: NodeInfo });
export const UpdateResourcesRequest = Schema.Struct({ MessageID, NodeID: NodeId, Resources: ResourceReport });

export type JoinRequest = typeof JoinRequest.Type;
export type HeartbeatRequest = typeof HeartbeatRequest.Type;
export type UpdateInfoRequest = typeof UpdateInfoRequest.Type;
export type UpdateResourcesRequest = typeof UpdateResourcesRequest.Type;

/**
 * Every reply: accepted or not, why, and (when refused) the error kind as a machine-readable code.
 * RetryAfter (seconds) comes with Code "Unavailable": the orchestrator could not do it now
 * (store trouble), nothing was changed, and the same request may be sent again after that long.
 */
export const ProtocolResponse = Schema.Struct({
  Accepted: Schema.Boolean,
  Reason: Schema.optional(Schema.String),
  Code: Schema.optional(Schema.String),
  /** Join replies: the node must now reconnect with its own key (the orchestrator's nats-server enforces it). */
  Reconnect: Schema.optional(Schema.Boolean),
  /**
   * Join replies from the orchestrator's own nats-server: the node's user JWT (its key, its
   * permissions), with which it logs in as itself (docs/security.md, NATS). Not a secret alone:
   * a login with it also needs the node's key.
   */
  UserJWT: Schema.optional(Schema.String),
  /** Unavailable replies: when trying again may help. */
  RetryAfter: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
  /**
   * Accepted replies (seconds): the window over which the node spreads its reconnects when it
   * loses its NATS connection, sized by the orchestrator to its fleet (docs/protocol.md,
   * Reconnecting). Absent: no spread asked.
   */
  ReconnectSpread: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
});
export type ProtocolResponse = typeof ProtocolResponse.Type;

/** Larger messages are refused before decoding. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
