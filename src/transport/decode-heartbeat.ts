import { NODE_ID_PATTERN } from "../events/catalog/node-id.ts";
import { unpack, validate } from "./codec.ts";
import { HeartbeatRequest } from "./messages.ts";

/**
 * Decodes a heartbeat as `decode(HeartbeatRequest, …)` would, without its cost on the hot path:
 * a well-formed heartbeat is checked field by field; anything else goes through the schema,
 * which refuses it with the same explanation as any other message.
 */
export function decodeHeartbeat(bytes: Uint8Array): HeartbeatRequest {
  const raw = unpack(bytes);
  return isWellFormed(raw) ? raw : validate(HeartbeatRequest, raw);
}

/** Exactly the schema's rules: NodeID a node id, Sequence a non-negative integer, an optional MessageID of 1–128 characters, nothing else. */
function isWellFormed(raw: unknown): raw is HeartbeatRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return false;
  let fields = 0;
  for (const key in raw) {
    if (key !== "NodeID" && key !== "Sequence" && key !== "MessageID") return false;
    fields++;
  }
  const { NodeID, Sequence, MessageID } = raw as Record<string, unknown>;
  if (typeof NodeID !== "string" || !NODE_ID_PATTERN.test(NodeID)) return false;
  if (typeof Sequence !== "number" || !Number.isInteger(Sequence) || Sequence < 0) return false;
  if (MessageID === undefined) return fields === 2;
  return typeof MessageID === "string" && MessageID.length >= 1 && MessageID.length <= 128;
}
