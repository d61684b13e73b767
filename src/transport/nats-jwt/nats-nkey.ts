import { createHmac, createPrivateKey, createPublicKey, randomBytes, sign } from "node:crypto";
import { Codec } from "nkeys.js/lib/codec.js";
import { Prefix } from "nkeys.js/lib/nkeys.js";
import { NkeyError } from "../nkey-signature.ts";

/**
 * Any NATS nkey (operator, account or user) signed with Node's own ed25519, for the same
 * reason as src/transport/nkey-signature.ts: nkeys.js signs in pure JavaScript (≈ 5 ms), and
 * the orchestrator signs a user JWT per join.
 */
export interface NatsNkey {
  readonly kind: NkeyKind;
  /** `O…`, `A…` or `U…`. */
  readonly publicKey: string;
  /** `SO…`, `SA…` or `SU…`: the secret. */
  readonly seed: string;
  sign(data: Uint8Array): Uint8Array;
}

export type NkeyKind = "operator" | "account" | "user";

const PREFIX: Record<NkeyKind, Prefix> = { operator: Prefix.Operator, account: Prefix.Account, user: Prefix.User };
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** The nkey whose ed25519 seed is these 32 bytes. */
export function nkeyFromRawSeed(kind: NkeyKind, raw: Uint8Array): NatsNkey {
  if (raw.length !== 32) throw new NkeyError("an nkey seed is 32 bytes");
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, raw]),
    format: "der",
    type: "pkcs8",
  });
  const publicRaw = createPublicKey(privateKey)
    .export({ format: "der", type: "spki" })
    .subarray(SPKI_ED25519_PREFIX.length);
  const text = new TextDecoder();
  return {
    kind,
    publicKey: text.decode(Codec.encode(PREFIX[kind], publicRaw)),
    seed: text.decode(Codec.encodeSeed(PREFIX[kind], raw)),
    sign: (data) => new Uint8Array(sign(null, data, privateKey)),
  };
}

export function newNkey(kind: NkeyKind): NatsNkey {
  return nkeyFromRawSeed(kind, randomBytes(32));
}

/** Reads a seed (`SO…`, `SA…`, `SU…`); `kind` is what the caller expects it to be. */
export function nkeyFromSeed(kind: NkeyKind, seed: string): NatsNkey {
  let decoded: { prefix: Prefix; buf: Uint8Array };
  try {
    decoded = Codec.decodeSeed(new TextEncoder().encode(seed.trim()));
  } catch (e) {
    throw new NkeyError(`not an nkey seed: ${(e as Error).message}`);
  }
  if (decoded.prefix !== PREFIX[kind]) throw new NkeyError(`not an ${kind} key`);
  return nkeyFromRawSeed(kind, decoded.buf);
}

/**
 * A key that everyone who knows `secret` computes alike, and nobody else can: HMAC-SHA256 of a
 * fixed label under the secret is the seed. The label keeps keys for different uses apart.
 */
export function nkeyDerivedFrom(kind: NkeyKind, secret: string, label: string): NatsNkey {
  return nkeyFromRawSeed(kind, createHmac("sha256", secret).update(label).digest());
}
