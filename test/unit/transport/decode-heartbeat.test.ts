import { describe, expect, it } from "vitest";
import { decode, encode } from "../../../src/transport/codec.ts";
import { agentHeartbeatIdSpan, isAgentHeartbeat } from "../../../src/transport/decode-heartbeat.ts";
import { isHeartbeatSubjectOf } from "../../../src/transport/subjects.ts";
import { HeartbeatRequest } from "../../../src/transport/messages.ts";
import { effectOnlyDecode } from "../../support/effect-only-decode.ts";

const outcome = (bytes: Uint8Array, decoder: (b: Uint8Array) => unknown) => {
  try {
    return { ok: decoder(bytes) };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
};

describe("decode(HeartbeatRequest)", () => {
  it("decodes exactly what the HeartbeatRequest schema accepts, and refuses the rest with the schema's reason", () => {
    const cases: unknown[] = [
      { NodeID: "n1", Sequence: 0 },
      { NodeID: "n1", Sequence: 7, MessageID: "m-1" },
      { MessageID: "x".repeat(128), NodeID: "a".repeat(128), Sequence: 2 ** 40 },
      { NodeID: "n1" },
      { Sequence: 1 },
      { NodeID: "n1", Sequence: -1 },
      { NodeID: "n1", Sequence: 1.5 },
      { NodeID: "n1", Sequence: 2 ** 53 },
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
      expect(
        outcome(bytes, (b) => decode(HeartbeatRequest, b)),
        JSON.stringify(value),
      ).toEqual(outcome(bytes, (b) => effectOnlyDecode(HeartbeatRequest, b)));
    }
    expect(decode(HeartbeatRequest, encode({ NodeID: "n1", Sequence: 3 }))).toEqual({ NodeID: "n1", Sequence: 3 });
  });

  it("refuses garbage and oversized messages as any message", () => {
    for (const bytes of [Uint8Array.of(0xc1), new Uint8Array(64 * 1024 + 1)]) {
      expect(outcome(bytes, (b) => decode(HeartbeatRequest, b))).toEqual(
        outcome(bytes, (b) => effectOnlyDecode(HeartbeatRequest, b)),
      );
      expect(() => decode(HeartbeatRequest, bytes)).toThrow();
    }
  });
});

describe("isAgentHeartbeat", () => {
  it("recognises, in place, what an agent publishes for that node, whatever the id's length and the sequence's size", () => {
    for (const nodeId of ["n", "a".repeat(31), "b".repeat(32), "c".repeat(128)]) {
      for (const Sequence of [0, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1]) {
        const bytes = encode({ NodeID: nodeId, Sequence });
        expect(isAgentHeartbeat(bytes, nodeId), `${nodeId.length} ${Sequence}`).toBe(true);
        expect(decode(HeartbeatRequest, bytes)).toEqual({ NodeID: nodeId, Sequence }); // the schema agrees
      }
    }
  });

  it("leaves everything else to the full decode: another node, order, field, encoding or trailing bytes", () => {
    const others: [unknown, string][] = [
      [{ NodeID: "n2", Sequence: 1 }, "n1"],
      [{ NodeID: "n1", Sequence: 1 }, "n11"],
      [{ NodeID: "n11", Sequence: 1 }, "n1"],
      [{ Sequence: 1, NodeID: "n1" }, "n1"],
      [{ NodeID: "n1", Sequence: 1, MessageID: "m" }, "n1"],
      [{ MessageID: "m", NodeID: "n1", Sequence: 1 }, "n1"],
      [{ NodeID: "n1", Sequence: -1 }, "n1"],
      [{ NodeID: "n1", Sequence: 1.5 }, "n1"],
      [{ NodeID: "n1", Sequence: 2 ** 32 }, "n1"],
      [{ NodeID: "n1", Sequence: "1" }, "n1"],
      [{ NodeID: "n1" }, "n1"],
      [["n1", 1], "n1"],
    ];
    for (const [value, nodeId] of others)
      expect(isAgentHeartbeat(encode(value), nodeId), JSON.stringify(value)).toBe(false);
    const exact = encode({ NodeID: "n1", Sequence: 1 });
    expect(isAgentHeartbeat(Uint8Array.from([...exact, 0]), "n1")).toBe(false);
    expect(isAgentHeartbeat(exact.subarray(0, exact.length - 1), "n1")).toBe(false);
    expect(isAgentHeartbeat(new Uint8Array(0), "n1")).toBe(false);
    // Other encoders write a two-entry map as a fixmap (0x82): as much an agent's heartbeat.
    const fixmap = Uint8Array.from([0x82, ...exact.subarray(3)]);
    expect([...exact.subarray(0, 3)]).toEqual([0xde, 0, 2]);
    expect(isAgentHeartbeat(fixmap, "n1")).toBe(true);
    expect(decode(HeartbeatRequest, fixmap)).toEqual({ NodeID: "n1", Sequence: 1 });
  });
});

describe("agentHeartbeatIdSpan", () => {
  const idAt = (bytes: Uint8Array) => {
    const span = agentHeartbeatIdSpan(bytes);
    return span === -1 ? undefined : new TextDecoder().decode(bytes.subarray(span >>> 8, (span >>> 8) + (span & 0xff)));
  };

  it("points at the node id of exactly what agents publish, and at nothing in anything else", () => {
    for (const nodeId of ["n", "a".repeat(31), "b".repeat(32), "c".repeat(128)]) {
      for (const Sequence of [0, 255, 65_536, 2 ** 32 - 1])
        expect(idAt(encode({ NodeID: nodeId, Sequence }))).toBe(nodeId);
    }
    for (const value of [
      { Sequence: 1, NodeID: "n1" },
      { NodeID: "n1", Sequence: 1, MessageID: "m" },
      { NodeID: "n1", Sequence: -1 },
      { NodeID: "n1", Sequence: 2 ** 32 },
      { NodeID: 5, Sequence: 1 },
      { NodeID: "n1" },
      { MessageID: "m", Info: {} },
      ["n1", 1],
    ]) {
      expect(agentHeartbeatIdSpan(encode(value)), JSON.stringify(value)).toBe(-1);
    }
    const exact = encode({ NodeID: "n1", Sequence: 1 });
    expect(agentHeartbeatIdSpan(Uint8Array.from([...exact, 0]))).toBe(-1);
    for (let cut = 0; cut < exact.length; cut++)
      expect(agentHeartbeatIdSpan(exact.subarray(0, cut)), `cut at ${cut}`).toBe(-1);
  });
});

describe("isHeartbeatSubjectOf", () => {
  it("accepts exactly shoal.compute.<id>.heartbeat, as bytes or as a string", () => {
    const id = new TextEncoder().encode("[n-1]");
    const cases: [string, boolean][] = [
      ["shoal.compute.n-1.heartbeat", true],
      ["shoal.compute.n-1.info", false],
      ["shoal.compute.n-2.heartbeat", false],
      ["shoal.compute.n-11.heartbeat", false],
      ["shoal.compute.n-.heartbeat", false],
      ["shoal.computer.n-1.heartbeat", false],
      ["shoal.compute.n-1.heartbeats", false],
      ["shoal.compute.n-1.heartbeaT", false],
      ["xshoal.compute.n-1.heartbeat", false],
    ];
    for (const [subject, expected] of cases) {
      expect(isHeartbeatSubjectOf(subject, id, 1, 3), subject).toBe(expected);
      expect(isHeartbeatSubjectOf(new TextEncoder().encode(subject), id, 1, 3), subject).toBe(expected);
    }
  });
});
