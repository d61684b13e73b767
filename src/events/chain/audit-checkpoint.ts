import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";

/**
 * A signed commitment to the chain: the link of the event at `position`, signed by the
 * orchestrator's audit key. Kept outside Shoal (it is published on NATS), it proves later that
 * the log up to `position` is the one it signed, even to someone who distrusts the store.
 */
export interface AuditCheckpoint {
  readonly position: number;
  /** The link at `position`, in hex. */
  readonly link: string;
  /** When it was signed (RFC 3339). */
  readonly time: string;
  /** A short name for the key: the first 16 hex digits of SHA-256 over its public key. */
  readonly keyId: string;
  /** The ed25519 public key, its 32 bytes in base64url. */
  readonly publicKey: string;
  /** The ed25519 signature over checkpointMessage(), in base64url. */
  readonly signature: string;
}

/** What is signed: a tag naming the layout, then the position, the link and the time, a line each. */
export function checkpointMessage(position: number, link: string, time: string): Buffer {
  return Buffer.from(`shoal-audit-checkpoint/1\n${position}\n${link}\n${time}`, "utf8");
}

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

function publicKeyObject(publicKey: string): KeyObject | undefined {
  const raw = Buffer.from(publicKey, "base64url");
  if (raw.length !== 32) return undefined;
  try {
    return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: "der", type: "spki" });
  } catch {
    return undefined;
  }
}

/** Whether the checkpoint's signature is its public key's, over its own position, link and time. */
export function checkpointSignatureValid(c: AuditCheckpoint): boolean {
  const key = publicKeyObject(c.publicKey);
  if (key === undefined) return false;
  try {
    return verify(null, checkpointMessage(c.position, c.link, c.time), key, Buffer.from(c.signature, "base64url"));
  } catch {
    return false;
  }
}
