/**
 * The hashing and signature checks a chain verification needs. WebCrypto (`webChainCrypto`) is in every browser and in
 * Node; the CLI hashes with Node's own, synchronous SHA-256 (node-chain-crypto.ts), which is many times faster per
 * event than WebCrypto's one promise per digest.
 */
export interface ChainCrypto {
  /** SHA-256 over the text's UTF-8 bytes. */
  sha256(text: string): Uint8Array | Promise<Uint8Array>;
  /** Whether `signature` is the ed25519 signature of `message` under the raw 32-byte `publicKey`. */
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

const encoder = new TextEncoder();
const subtle = () => globalThis.crypto.subtle;

/** WebCrypto's SHA-256 and Ed25519 (the global `crypto.subtle`). */
export const webChainCrypto: ChainCrypto = {
  sha256: async (text) => new Uint8Array(await subtle().digest("SHA-256", encoder.encode(text))),
  ed25519Verify: async (publicKey, message, signature) => {
    try {
      // Copies: WebCrypto takes views of a plain ArrayBuffer only (a Node Buffer may sit in a shared pool).
      const key = await subtle().importKey("raw", new Uint8Array(publicKey), { name: "Ed25519" }, false, ["verify"]);
      return await subtle().verify({ name: "Ed25519" }, key, new Uint8Array(signature), new Uint8Array(message));
    } catch {
      // A key WebCrypto does not take (not a point on the curve) verifies nothing.
      return false;
    }
  },
};
