import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { decodeNodeEvent } from "../../../src/events/catalog/node-event-codec.ts";
import { NODE_INFO_LIMITS, NodeInfo, StoredNodeInfo } from "../../../src/events/catalog/node-info.ts";
import { MAX_LABELS, labelKeyProblem, labelValueProblem } from "../../../src/labels/label-rule.ts";
import { decode, encode, ProtocolError } from "../../../src/transport/codec.ts";
import { computeInfo } from "../../support/fixtures.ts";

const accepted = (info: unknown) => decode(NodeInfo, encode(info));
const refusal = (info: unknown): string => {
  try {
    decode(NodeInfo, encode(info));
  } catch (e) {
    if (e instanceof ProtocolError) return e.message;
    throw e;
  }
  throw new Error("accepted");
};
const labelsOf = (n: number, key = (i: number) => `k${i}`, value = () => "v") =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [key(i), value()]));
const withEngines = (engines: string[]) => ({
  ...computeInfo("n1"),
  ComputeNodeInfo: { ...computeInfo("n1").ComputeNodeInfo!, ExecutionEngines: engines },
});

describe("NodeInfo entering Shoal", () => {
  it("accepts what a compute node reports", () => {
    expect(accepted(computeInfo("n1", { zone: "a", "example.com/rack": "r-7", empty: "" }))).toEqual(
      computeInfo("n1", { zone: "a", "example.com/rack": "r-7", empty: "" }),
    );
  });

  it("refuses labels Kubernetes would refuse, and more than the cap", () => {
    expect(refusal(computeInfo("n1", { "bad key": "x" }))).toMatch(
      /label key "bad key": the name must be letters, digits/,
    );
    expect(refusal(computeInfo("n1", { zone: "a b" }))).toMatch(/label value "a b"/);
    expect(refusal(computeInfo("n1", { zone: "v".repeat(64) }))).toMatch(/longer than 63/);
    expect(refusal(computeInfo("n1", { "Example.COM/zone": "a" }))).toMatch(/DNS subdomain/);
    expect(refusal({ ...computeInfo("n1"), Labels: labelsOf(MAX_LABELS + 1) })).toMatch(
      `${MAX_LABELS + 1} labels; a node may have at most ${MAX_LABELS}`,
    );
    expect(accepted({ ...computeInfo("n1"), Labels: labelsOf(MAX_LABELS) }).Labels).toEqual(labelsOf(MAX_LABELS));
  });

  it("caps the hostname and the engine, publisher and storage lists", () => {
    expect(accepted({ ...computeInfo("n1"), Hostname: "h".repeat(253) }).Hostname).toHaveLength(253);
    expect(refusal({ ...computeInfo("n1"), Hostname: "h".repeat(254) })).toMatch(/Hostname[\s\S]*at most 253/);
    expect(refusal(withEngines(Array.from({ length: 33 }, (_, i) => `e${i}`)))).toMatch(
      /ExecutionEngines[\s\S]*at most 32/,
    );
    expect(refusal(withEngines(["e".repeat(65)]))).toMatch(/ExecutionEngines[\s\S]*at most 64/);
    expect(refusal(withEngines([""]))).toMatch(/ExecutionEngines/);
  });

  it("caps the encoded size of the whole report, each part within its own cap", () => {
    // 64 labels of 253-character keys and 63-character values: every label valid, ~21 KB in all.
    const key = (i: number) => `${"p".repeat(187)}${String(i).padStart(2, "0")}/${"n".repeat(63)}`;
    const big = { ...computeInfo("n1"), Labels: labelsOf(MAX_LABELS, key, () => "v".repeat(63)) };
    for (const [k, v] of Object.entries(big.Labels)) expect(labelKeyProblem(k) ?? labelValueProblem(v)).toBeUndefined();
    expect(encode(big).byteLength).toBeLessThan(64 * 1024);
    expect(refusal(big)).toMatch(
      new RegExp(`node info is \\d+ bytes encoded; the limit is ${NODE_INFO_LIMITS.maxBytes}`),
    );
  });

  it("accepts only what the stored-event schema can read back", () => {
    const edge = {
      ...computeInfo("n1"),
      Hostname: "h".repeat(253),
      Labels: { [`${"p".repeat(189)}/${"n".repeat(63)}`]: "v".repeat(63), e: "" },
    };
    const info = accepted(edge);
    expect(Schema.decodeUnknownSync(StoredNodeInfo, { onExcessProperty: "error" })(info)).toEqual(info);
  });
});

describe("stored node events", () => {
  it("still decode with everything an earlier Shoal accepted, even where the new rule refuses it", () => {
    const old = {
      ...computeInfo("n1"),
      Hostname: "h".repeat(256),
      Labels: { "bad key": "a b", "Example.COM/zone": "-x-", [`${"k".repeat(253)}`]: "v", ...labelsOf(100) },
      ComputeNodeInfo: {
        ...computeInfo("n1").ComputeNodeInfo!,
        ExecutionEngines: ["", "e".repeat(256), ...Array.from({ length: 62 }, (_, i) => `e${i}`)],
      },
    };
    expect(() => accepted(old)).toThrow(ProtocolError);
    const recorded = {
      id: "4f1d5b9e-0000-4000-8000-000000000001",
      type: "NodeRegistered",
      stream: "node-n1",
      revision: 0,
      position: 1,
      time: "2026-01-01T00:00:00.000Z",
      data: { NodeID: "n1", NodeType: "Compute", Info: old, Membership: "PENDING", Lifecycle: 1 },
      metadata: {
        time: "2026-01-01T00:00:00.000Z",
        actor: { type: "node", id: "n1" },
        correlationId: "c",
        causationId: "c",
        schemaVersion: 1,
      },
    };
    expect(decodeNodeEvent(recorded)).toEqual({ type: "NodeRegistered", data: recorded.data });
    const updated = {
      ...recorded,
      type: "NodeInfoUpdated",
      revision: 1,
      position: 2,
      data: { NodeID: "n1", Info: old, Changed: ["Labels"] },
    };
    expect(decodeNodeEvent(updated)).toEqual({ type: "NodeInfoUpdated", data: updated.data });
  });
});
