import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fromBase64Url, fromHex, sameBytes, toHex } from "../../../../src/events/chain/chain-bytes.ts";
import { webChainCrypto } from "../../../../src/events/chain/chain-crypto.ts";
import { eventLinkHex } from "../../../../src/events/chain/event-link.ts";
import { linkText, utf8Length } from "../../../../src/events/chain/link-text.ts";
import { nodeChainCrypto } from "../../../../src/events/chain/node-chain-crypto.ts";

// The browser's side of the chain (no Buffer, WebCrypto) must give the bytes Node's does, or the console would call
// an intact log broken.
describe("the chain's Node-free bytes", () => {
  it("write and read hex and base64url as Buffer does, and refuse what is neither", () => {
    for (const n of [0, 1, 32, 64]) {
      const bytes = randomBytes(n);
      expect(toHex(bytes)).toBe(bytes.toString("hex"));
      expect(fromHex(bytes.toString("hex"))).toEqual(new Uint8Array(bytes));
      expect(fromBase64Url(bytes.toString("base64url"))).toEqual(new Uint8Array(bytes));
    }
    expect(fromHex("abc")).toBeUndefined();
    expect(fromHex("zz")).toBeUndefined();
    expect(fromBase64Url("not a key")).toBeUndefined();
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(sameBytes(new Uint8Array([1]), new Uint8Array([1, 2]))).toBe(false);
  });

  it("count UTF-8 bytes as Buffer.byteLength does, lone surrogates included", () => {
    const texts = ["", "plain", "é", "€uro", "😀 emoji", "a\uD800b", "\uDC00", "end\uD83D", "ünïcødé 🚀 mixed"];
    for (const text of texts) expect(utf8Length(text), JSON.stringify(text)).toBe(Buffer.byteLength(text, "utf8"));
  });

  it("make the writer's link from the same text with WebCrypto's SHA-256 and with Node's", async () => {
    const fields = {
      position: 7,
      id: "e-7",
      stream: "node-ñ-1",
      revision: 2,
      type: "NodeLabelsSet",
      time: "2026-11-30T08:00:00.000Z",
      data: '{"labels":{"zone":"zürich 🏔"}}',
      metadata: '{"reason":"\uD800 lone"}',
    };
    const previous = randomBytes(32).toString("hex");
    const text = linkText(previous, 6, fields);
    const expected = eventLinkHex(previous, 6, fields);
    expect(createHash("sha256").update(text).digest("hex")).toBe(expected);
    expect(toHex(await webChainCrypto.sha256(text))).toBe(expected);
    expect(toHex(await nodeChainCrypto.sha256(text))).toBe(expected);
  });
});
