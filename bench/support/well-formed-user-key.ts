import { randomBytes } from "node:crypto";
import { Codec } from "nkeys.js/lib/codec.js";
import { Prefix } from "nkeys.js/lib/nkeys.js";

/**
 * A user nkey public key as NATS checks it (prefix U, 32 random key bytes, CRC-16, base32), with no
 * key pair behind it: what a seeded NodeCredentialBound needs where no agent logs in with the key.
 * Making real key pairs costs milliseconds each, too slow for 100,000 nodes.
 */
export function wellFormedUserKey(): string {
  return new TextDecoder().decode(Codec.encode(Prefix.User, randomBytes(32)));
}
