import { createHmac, timingSafeEqual } from "node:crypto";

const CONTEXT = "shoal-join-v1";

/**
 * Proof that a join request comes from a holder of the join token, bound to this node id, key
 * and message: a captured proof cannot join another id or key, and the token never travels.
 */
export function joinProof(token: string, nodeId: string, publicKey: string, messageId: string): string {
  return createHmac("sha256", token).update(`${CONTEXT}\n${nodeId}\n${publicKey}\n${messageId}`).digest("base64url");
}

export function verifyJoinProof(token: string, nodeId: string, publicKey: string, messageId: string, proof: string): boolean {
  const expected = Buffer.from(joinProof(token, nodeId, publicKey, messageId));
  const given = Buffer.from(proof);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The password the join token logs in with on the orchestrator's nats-server: derived, so that
 * neither the wire nor the server's config file ever holds the token itself.
 */
export function joinNatsPassword(token: string): string {
  return createHmac("sha256", token).update(`${CONTEXT}\nnats-password`).digest("base64url");
}
