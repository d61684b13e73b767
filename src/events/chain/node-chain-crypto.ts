import { hash } from "node:crypto";
import { webChainCrypto, type ChainCrypto } from "./chain-crypto.ts";

/**
 * Node's SHA-256, synchronous: a walk over millions of events hashes each one, and WebCrypto's digest (a promise per
 * call) takes about 25 times as long per event. Signatures are few: WebCrypto's, as in the browser.
 */
export const nodeChainCrypto: ChainCrypto = {
  sha256: (text) => hash("sha256", text, "buffer"),
  ed25519Verify: webChainCrypto.ed25519Verify,
};
