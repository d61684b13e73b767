import { createHmac, timingSafeEqual } from "node:crypto";
import { verifyUserNkeySignature } from "./nkey-signature.ts";

const CONTEXT = "shoal-join-v1";

/** What a join proves, both with the join token (HMAC) and with the node's key (signature). */
export const joinStatement = (nodeId: string, publicKey: string, messageId: string): string =>
  `${CONTEXT}\n${nodeId}\n${publicKey}\n${messageId}`;

/** A node's key as a join uses it: its public half, and signing with its secret half. */
export interface JoinKey {
  readonly publicKey: string;
  sign(data: Uint8Array): Uint8Array;
}

/**
 * Proof that a join request comes from a holder of the join token, bound to this node id, key
 * and message: a captured proof cannot join another id or key, and the token never travels.
 */
export function joinProof(token: string, nodeId: string, publicKey: string, messageId: string): string {
  return createHmac("sha256", token)
    .update(joinStatement(nodeId, publicKey, messageId))
    .digest("base64url");
}

export function verifyJoinProof(
  token: string,
  nodeId: string,
  publicKey: string,
  messageId: string,
  proof: string,
): boolean {
  const expected = Buffer.from(joinProof(token, nodeId, publicKey, messageId));
  const given = Buffer.from(proof);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Proof that the joiner holds the key it names. Public keys are no secret (they are in every
 * node's history), so without this a token holder could join "as" a live node with that node's
 * own key and speak for it.
 */
export function signJoin(key: JoinKey, nodeId: string, messageId: string): string {
  return Buffer.from(key.sign(new TextEncoder().encode(joinStatement(nodeId, key.publicKey, messageId)))).toString(
    "base64url",
  );
}

export function verifyJoinSignature(nodeId: string, publicKey: string, messageId: string, signature: string): boolean {
  return verifyUserNkeySignature(
    publicKey,
    new TextEncoder().encode(joinStatement(nodeId, publicKey, messageId)),
    Buffer.from(signature, "base64url"),
  );
}
