import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto";
import { checkpointMessage, type AuditCheckpoint } from "./checkpoint-signature.ts";

// The checkpoint and its check are Node-free (checkpoint-signature.ts; the web console verifies too); signing is here.
export { checkpointMessage, checkpointSignatureValid, type AuditCheckpoint } from "./checkpoint-signature.ts";

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export interface AuditSigningKey {
  readonly keyId: string;
  readonly publicKey: string;
  sign(position: number, link: string, time: string): AuditCheckpoint;
}

export function keyIdOf(publicKey: string): string {
  return createHash("sha256").update(Buffer.from(publicKey, "base64url")).digest("hex").slice(0, 16);
}

/** The ed25519 key whose seed is these 32 bytes. */
export function auditSigningKey(seed: Uint8Array): AuditSigningKey {
  if (seed.length !== 32) throw new Error("an audit signing key's seed is 32 bytes");
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const publicKey = createPublicKey(privateKey)
    .export({ format: "der", type: "spki" })
    .subarray(SPKI_ED25519_PREFIX.length)
    .toString("base64url");
  const keyId = keyIdOf(publicKey);
  return {
    keyId,
    publicKey,
    sign: (position, link, time) => ({
      position,
      link,
      time,
      keyId,
      publicKey,
      signature: sign(null, checkpointMessage(position, link, time), privateKey).toString("base64url"),
    }),
  };
}
