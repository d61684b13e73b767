import { randomBytes } from "node:crypto";
import { nkeys } from "nats";
import { Codec } from "nkeys.js/lib/codec.js";
import { Prefix } from "nkeys.js/lib/nkeys.js";
import { describe, expect, it } from "vitest";
import { verifyUserNkeySignature } from "../../../src/transport/nkey-signature.ts";
import { accountJwt, decodeJwt, operatorJwt, userJwt } from "../../../src/transport/nats-jwt/nats-jwt.ts";
import {
  newNkey,
  nkeyFromRawSeed,
  nkeyFromSeed,
  type NatsNkey,
  type NkeyKind,
} from "../../../src/transport/nats-jwt/nats-nkey.ts";
import { nodePermissions } from "../../../src/transport/nats-auth/nats-roles.ts";

/**
 * The orchestrator signs and verifies with Node's ed25519 (OpenSSL), not nkeys.js (pure
 * JavaScript): ed25519 is deterministic, so both must give the very same bytes, and nats-server
 * (which checks them with Go's ed25519) must not be able to tell the difference.
 */
const hex = (h: string) => Uint8Array.from(Buffer.from(h, "hex"));
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const PREFIX: Record<NkeyKind, Prefix> = { operator: Prefix.Operator, account: Prefix.Account, user: Prefix.User };
const pairOf = (key: NatsNkey) => nkeys.fromSeed(new TextEncoder().encode(key.seed));

// RFC 8032, section 7.1, tests 1–3: secret key, public key, message, signature.
const RFC8032 = [
  {
    secret: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    public: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature:
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    secret: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    public: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature:
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    secret: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    public: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    message: "af82",
    signature:
      "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
];

describe("native ed25519 for nkeys", () => {
  it("signs RFC 8032's test vectors to the byte, for every kind of key, and nkeys.js agrees", () => {
    for (const v of RFC8032) {
      for (const kind of ["operator", "account", "user"] as NkeyKind[]) {
        const key = nkeyFromRawSeed(kind, hex(v.secret));
        const pair = pairOf(key);
        expect(Buffer.from(pair.getPublicKey())).toEqual(Buffer.from(key.publicKey));
        expect(Buffer.from(key.sign(hex(v.message))).toString("hex")).toBe(v.signature);
        expect(Buffer.from(pair.sign(hex(v.message))).toString("hex")).toBe(v.signature);
        // The public key the nkey names is the vector's.
        expect(Buffer.from(Codec.decode(PREFIX[kind], new TextEncoder().encode(key.publicKey))).toString("hex")).toBe(
          v.public,
        );
      }
      const user = nkeyFromRawSeed("user", hex(v.secret));
      expect(verifyUserNkeySignature(user.publicKey, hex(v.message), hex(v.signature))).toBe(true);
    }
  });

  it("gives the same public keys, seeds and signatures as nkeys.js for random keys and payloads", () => {
    for (let i = 0; i < 30; i++) {
      const kind = (["operator", "account", "user"] as NkeyKind[])[i % 3] as NkeyKind;
      const key = newNkey(kind);
      const pair = pairOf(key);
      expect(pair.getPublicKey()).toBe(key.publicKey);
      expect(new TextDecoder().decode(pair.getSeed())).toBe(key.seed);
      expect(nkeyFromSeed(kind, key.seed).publicKey).toBe(key.publicKey);
      const payload = randomBytes(i * 71);
      const signature = key.sign(payload);
      expect(b64url(signature)).toBe(b64url(pair.sign(payload)));
      expect(pair.verify(payload, signature)).toBe(true);
      if (kind === "user") {
        expect(verifyUserNkeySignature(key.publicKey, payload, pair.sign(payload))).toBe(true);
        const other = Buffer.concat([payload, Buffer.of(1)]);
        expect(verifyUserNkeySignature(key.publicKey, other, signature)).toBe(false);
      }
    }
  });

  it("signs NATS JWTs (operator, account, user) whose signature is exactly nkeys.js's over the same header and claims", () => {
    const operator = newNkey("operator");
    const account = newNkey("account");
    const signer = newNkey("account");
    const node = newNkey("user");
    const jwts: [string, NatsNkey][] = [
      [operatorJwt(operator, "shoal", account.publicKey, [newNkey("operator").publicKey]), operator],
      [
        accountJwt(operator, account.publicKey, "SHOAL", {
          signingKeys: [signer.publicKey],
          revocations: new Map([[newNkey("user").publicKey, 1_700_000_000]]),
          iat: 1_700_000_001,
        }),
        operator,
      ],
      [
        userJwt(signer, node.publicKey, "edge-1", nodePermissions("edge-1"), {
          issuerAccount: account.publicKey,
          iat: 1_700_000_002,
        }),
        signer,
      ],
      [
        userJwt(signer, node.publicKey, "leaf", undefined, {
          issuerAccount: account.publicKey,
          connectionTypes: ["LEAFNODE"],
          exp: 2_000_000_000,
        }),
        signer,
      ],
    ];
    for (const [jwt, issuer] of jwts) {
      const [header, claims, signature] = jwt.split(".") as [string, string, string];
      const signed = new TextEncoder().encode(`${header}.${claims}`);
      expect(signature).toBe(b64url(pairOf(issuer).sign(signed)));
      expect(nkeys.fromPublic(issuer.publicKey).verify(signed, Buffer.from(signature, "base64url"))).toBe(true);
      expect(decodeJwt(jwt).iss).toBe(issuer.publicKey);
    }
  });
});
