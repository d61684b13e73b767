import { describe, expect, it } from "vitest";
import { decode, encode } from "../../../src/transport/codec.ts";
import { decodeHeartbeat } from "../../../src/transport/decode-heartbeat.ts";
import { HeartbeatRequest } from "../../../src/transport/messages.ts";

const outcome = (bytes: Uint8Array, decoder: (b: Uint8Array) => unknown) => {
  try {
    return { ok: decoder(bytes) };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
};

describe("decodeHeartbeat", () => {
  it("decodes exactly what the HeartbeatRequest schema accepts, and refuses the rest with the schema's reason", () => {
    const cases: unknown[] = [
      { NodeID: "n1", Sequence: 0 },
      { NodeID: "n1", Sequence: 7, MessageID: "m-1" },
      { MessageID: "x".repeat(128), NodeID: "a".repeat(128), Sequence: 2 ** 40 },
      { NodeID: "n1" },
      { Sequence: 1 },
      { NodeID: "n1", Sequence: -1 },
      { NodeID: "n1", Sequence: 1.5 },
      { NodeID: "n1", Sequence: "1" },
      { NodeID: "n.1", Sequence: 1 },
      { NodeID: "a".repeat(129), Sequence: 1 },
      { NodeID: "", Sequence: 1 },
      { NodeID: "n1", Sequence: 1, MessageID: "" },
      { NodeID: "n1", Sequence: 1, MessageID: "x".repeat(129) },
      { NodeID: "n1", Sequence: 1, MessageID: 5 },
      { NodeID: "n1", Sequence: 1, MessageID: null },
      { NodeID: "n1", Sequence: 1, Extra: true },
      [{ NodeID: "n1", Sequence: 1 }],
      "n1",
      null,
      42,
    ];
    for (const value of cases) {
      const bytes = encode(value);
      expect(outcome(bytes, decodeHeartbeat), JSON.stringify(value)).toEqual(outcome(bytes, (b) => decode(HeartbeatRequest, b)));
    }
    expect(decodeHeartbeat(encode({ NodeID: "n1", Sequence: 3 }))).toEqual({ NodeID: "n1", Sequence: 3 });
  });

  it("refuses garbage and oversized messages as any message", () => {
    for (const bytes of [Uint8Array.of(0xc1), new Uint8Array(64 * 1024 + 1)]) {
      expect(outcome(bytes, decodeHeartbeat)).toEqual(outcome(bytes, (b) => decode(HeartbeatRequest, b)));
      expect(() => decodeHeartbeat(bytes)).toThrow();
    }
  });
});
