import { nkeys } from "nats";
import { describe, expect, it } from "vitest";
import {
  NkeyError,
  ed25519PublicKey,
  nkeyLogin,
  userNkeyFromSeed,
  verifyUserNkeySignature,
} from "../../../src/transport/nkey-signature.ts";

const data = new TextEncoder().encode("shoal-join-v1\nnode-1\nU…\nmessage-1");

describe("user nkeys signed natively", () => {
  it("derive the same public key and the same signatures as nkeys.js", () => {
    for (let i = 0; i < 20; i++) {
      const pair = nkeys.createUser();
      const key = userNkeyFromSeed(pair.getSeed());
      expect(key.publicKey).toBe(pair.getPublicKey());
      expect(Buffer.from(key.sign(data))).toEqual(Buffer.from(pair.sign(data)));
      expect(pair.verify(data, key.sign(data))).toBe(true);
    }
  });

  it("accept only a signature by that key over those bytes", () => {
    const pair = nkeys.createUser();
    const signature = pair.sign(data);
    expect(verifyUserNkeySignature(pair.getPublicKey(), data, signature)).toBe(true);
    expect(verifyUserNkeySignature(nkeys.createUser().getPublicKey(), data, signature)).toBe(false);
    expect(verifyUserNkeySignature(pair.getPublicKey(), new TextEncoder().encode("other"), signature)).toBe(false);
    const flipped = Uint8Array.from(signature);
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(verifyUserNkeySignature(pair.getPublicKey(), data, flipped)).toBe(false);
  });

  it("treat a malformed key (bad checksum, wrong role, garbage) as not verified", () => {
    const pair = nkeys.createUser();
    const signature = pair.sign(data);
    const publicKey = pair.getPublicKey();
    const lastChanged = publicKey.slice(0, -1) + (publicKey.endsWith("A") ? "B" : "A");
    expect(verifyUserNkeySignature(lastChanged, data, signature)).toBe(false);
    expect(verifyUserNkeySignature(nkeys.createAccount().getPublicKey(), data, signature)).toBe(false);
    expect(verifyUserNkeySignature("not a key", data, signature)).toBe(false);
  });

  it("import a public key only from 32 raw bytes", () => {
    expect(() => ed25519PublicKey(new Uint8Array(31))).toThrow(NkeyError);
    expect(() => ed25519PublicKey(new Uint8Array(33))).toThrow(NkeyError);
    expect(ed25519PublicKey(new Uint8Array(32).fill(7)).asymmetricKeyType).toBe("ed25519");
  });

  it("refuses a seed that is not a user's", () => {
    expect(() => userNkeyFromSeed(nkeys.createAccount().getSeed())).toThrow(NkeyError);
    expect(() => userNkeyFromSeed(new TextEncoder().encode("SUgarbage"))).toThrow(NkeyError);
  });

  it("logs in to NATS as nats.js's nkey authenticator does: the key and its signature of the nonce", () => {
    const pair = nkeys.createUser();
    const auth = nkeyLogin(userNkeyFromSeed(pair.getSeed()))("a-nonce") as { nkey: string; sig: string };
    expect(auth.nkey).toBe(pair.getPublicKey());
    expect(pair.verify(new TextEncoder().encode("a-nonce"), Buffer.from(auth.sig, "base64"))).toBe(true);
  });
});
