import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import type { Authenticator } from "nats";
import { Codec } from "nkeys.js/lib/codec.js";
import { Prefix } from "nkeys.js/lib/nkeys.js";
import type { JoinKey } from "./join-proof.ts";

/**
 * NATS user nkeys signed and verified with Node's own ed25519 (OpenSSL): nkeys.js signs in pure
 * JavaScript, ≈ 5 ms per signature and ≈ 13 ms per verification on the development machine,
 * which capped the orchestrator's joins near 80/s and a simulated fleet's logins near 100/s.
 * nkeys.js still does the encoding (base32 with its checksum), so the keys are the same strings.
 */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export class NkeyError extends Error {
  override readonly name = "NkeyError";
}

/** A user nkey from its seed (`SU…`): its public key (`U…`) and signing with it. */
export function userNkeyFromSeed(seed: Uint8Array): JoinKey {
  let decoded: { prefix: Prefix; buf: Uint8Array };
  try {
    decoded = Codec.decodeSeed(seed);
  } catch (e) {
    throw new NkeyError(`not an nkey seed: ${(e as Error).message}`);
  }
  if (decoded.prefix !== Prefix.User) throw new NkeyError("not a user key");
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, decoded.buf]),
    format: "der",
    type: "pkcs8",
  });
  const raw = createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(SPKI_ED25519_PREFIX.length);
  const publicKey = new TextDecoder().decode(Codec.encode(Prefix.User, raw));
  return { publicKey, sign: (data) => new Uint8Array(sign(null, data, privateKey)) };
}

/**
 * An ed25519 public key from its 32 raw bytes. As a JWK, not DER: OpenSSL 3 decodes DER through
 * its generic decoder framework (≈ 85 µs of CPU here, more than the verification itself), a JWK
 * from the raw bytes directly (≈ 6 µs). Every join verifies a signature by a key never seen before.
 */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new NkeyError("an ed25519 public key is 32 bytes");
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(raw).toString("base64url") },
    format: "jwk",
  });
}

/** Whether `signature` over `data` was made by the user nkey `publicKey`; a malformed key is false. */
export function verifyUserNkeySignature(publicKey: string, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    const raw = Codec.decode(Prefix.User, new TextEncoder().encode(publicKey));
    return verify(null, data, ed25519PublicKey(raw), signature);
  } catch {
    return false;
  }
}

/** Logs in to NATS as the key: signs the server's nonce (what nats.js's nkeyAuthenticator does, natively). */
export function nkeyLogin(key: JoinKey): Authenticator {
  return (nonce?: string) => ({
    nkey: key.publicKey,
    sig: nonce ? Buffer.from(key.sign(new TextEncoder().encode(nonce))).toString("base64") : "",
  });
}
