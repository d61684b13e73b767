import { Schema } from "effect";
import { NodeId, NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";

const Token = Schema.optional(Schema.String.pipe(Schema.maxLength(4096)));
const MessageID = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128));

export const RegisterRequest = Schema.Struct({ MessageID, Token, Info: NodeInfo });
export const HeartbeatRequest = Schema.Struct({
  MessageID,
  Token,
  NodeID: NodeId,
  Sequence: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
});
export const UpdateInfoRequest = Schema.Struct({ MessageID, Token, Info: NodeInfo });
export const UpdateResourcesRequest = Schema.Struct({ MessageID, Token, NodeID: NodeId, Resources: ResourceReport });

export type RegisterRequest = typeof RegisterRequest.Type;
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
  RetryAfter: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
});
export type ProtocolResponse = typeof ProtocolResponse.Type;

/** Larger messages are refused before decoding. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
