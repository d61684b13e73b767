import { fromBase64Url } from "./chain-bytes.ts";
import { webChainCrypto, type ChainCrypto } from "./chain-crypto.ts";

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
export function checkpointMessage(position: number, link: string, time: string): Uint8Array {
  return new TextEncoder().encode(`shoal-audit-checkpoint/1\n${position}\n${link}\n${time}`);
}

/** Whether the checkpoint's signature is its public key's, over its own position, link and time. */
export async function checkpointSignatureValid(
  c: AuditCheckpoint,
  crypto: ChainCrypto = webChainCrypto,
): Promise<boolean> {
  const key = fromBase64Url(c.publicKey);
  const signature = fromBase64Url(c.signature);
  if (key?.length !== 32 || signature === undefined) return false;
  return crypto.ed25519Verify(key, checkpointMessage(c.position, c.link, c.time), signature);
}

/** Whether `key` is written as an audit public key is: an ed25519 key's 32 bytes in base64url (43 characters). */
export const isAuditPublicKey = (key: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(key);

/** A checkpoint saved outside that is the store's own, byte for byte, is checked (and counted) once. */
export function distinctCheckpoints(checkpoints: readonly AuditCheckpoint[]): AuditCheckpoint[] {
  const seen = new Map<string, AuditCheckpoint>();
  for (const c of checkpoints) seen.set(JSON.stringify([c.position, c.link, c.time, c.keyId, c.signature]), c);
  return [...seen.values()];
}
