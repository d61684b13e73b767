import { describe, expect, it } from "vitest";
import { computeNodeInfo } from "../../../src/compute/machine-info.ts";
import { virtualNodeInfo } from "../../../src/sim/virtual-node-info.ts";
import { decode, encode } from "../../../src/transport/codec.ts";
import { joinProof, signJoin } from "../../../src/transport/join-proof.ts";
import { JoinRequest } from "../../../src/transport/messages.ts";
import { newNkey } from "../../../src/transport/nats-jwt/nats-nkey.ts";
import { effectOnlyDecode } from "../../support/effect-only-decode.ts";
import { tempDir } from "../../support/fixtures.ts";

const outcome = (bytes: Uint8Array, decoder: (b: Uint8Array) => unknown) => {
  try {
    return { ok: decoder(bytes) };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
};

/** A join request as ComputeClient.join builds it (the same keys, in the same order). */
function request(nodeId: string, info: unknown): Record<string, unknown> {
  const key = newNkey("user");
  const messageId = `m-${nodeId}`;
  return {
    MessageID: messageId,
    Info: info,
    PublicKey: key.publicKey,
    Proof: joinProof("token", nodeId, key.publicKey, messageId),
    Signature: signJoin(key, nodeId, messageId),
  };
}

const agent = request("edge-1", computeNodeInfo("edge-1", { zone: "a" }, tempDir("shoal-join-decode-")));
const sim = request("sim-000001", virtualNodeInfo("sim-000001", 1));
const info = agent.Info as Record<string, unknown>;
const compute = info.ComputeNodeInfo as Record<string, unknown>;

describe("decode(JoinRequest)", () => {
  it("decodes exactly what the JoinRequest schema accepts, and refuses the rest with the schema's reason", () => {
    const cases: unknown[] = [
      agent,
      sim,
      { ...agent, Rejoin: true },
      { ...agent, Rejoin: "yes" },
      { ...agent, Extra: 1 },
      // Another key order: the schema decides (and accepts).
      {
        Signature: agent.Signature,
        Proof: agent.Proof,
        PublicKey: agent.PublicKey,
        Info: agent.Info,
        MessageID: agent.MessageID,
      },
      { ...agent, Proof: "short" },
      { ...agent, Signature: `${String(agent.Signature).slice(1)}=` },
      { ...agent, PublicKey: "UNOTAKEY" },
      { ...agent, MessageID: "" },
      { ...agent, MessageID: 7 },
      { ...agent, Info: { ...info, NodeID: "a.b" } },
      { ...agent, Info: { ...info, NodeType: "Other" } },
      { ...agent, Info: { ...info, Hostname: "h".repeat(254) } },
      { ...agent, Info: { ...info, Labels: { "bad key!": "x" } } },
      {
        ...agent,
        Info: { ...info, Labels: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, "v"])) },
      },
      { ...agent, Info: { ...info, Extra: true } },
      { ...agent, Info: { ...info, ComputeNodeInfo: { ...compute, ExecutionEngines: [""] } } },
      { ...agent, Info: { ...info, ComputeNodeInfo: { ...compute, MaxCapacity: { CPU: -1 } } } },
      { ...agent, Info: { ...info, ComputeNodeInfo: { ...compute, MaxCapacity: { GPU: 1.5 } } } },
      {
        ...agent,
        Info: { ...info, ComputeNodeInfo: { ...compute, Publishers: Array.from({ length: 33 }, () => "p") } },
      },
      {
        ...agent,
        Info: {
          ...info,
          Labels: { big: "v".repeat(63) },
          Hostname: "h".repeat(253),
          ComputeNodeInfo: { ...compute, StorageSources: Array.from({ length: 32 }, () => "s".repeat(64)) },
        },
      },
      { ...agent, Info: { ...info, BacalhauVersion: { GitVersion: "v1" } } },
      { ...agent, Info: null },
      [agent],
      "join",
      null,
    ];
    for (const value of cases) {
      const bytes = encode(value);
      expect(
        outcome(bytes, (b) => decode(JoinRequest, b)),
        JSON.stringify(value).slice(0, 200),
      ).toEqual(outcome(bytes, (b) => effectOnlyDecode(JoinRequest, b)));
    }
    expect(decode(JoinRequest, encode(agent))).toEqual(agent);
  });

  it("refuses garbage and oversized messages as any message", () => {
    for (const bytes of [Uint8Array.of(0xc1), new Uint8Array(64 * 1024 + 1)]) {
      expect(outcome(bytes, (b) => decode(JoinRequest, b))).toEqual(
        outcome(bytes, (b) => effectOnlyDecode(JoinRequest, b)),
      );
      expect(() => decode(JoinRequest, bytes)).toThrow();
    }
  });
});
