import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { decode, encode } from "../../src/transport/codec.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * Limits a hostile or broken fleet cannot exceed, driven over a real nats-server with raw
 * msgpack messages as any client could send them.
 */
const TOKEN = "s3cret";
const nats = natsPerSuite();

interface Running {
  orchestrator: RunningOrchestrator;
  config: ShoalConfig;
  clock: ManualClock;
}

/** One orchestrator per describe block: each starts with its own store and a full bucket. */
function orchestratorFor(extra: Partial<ShoalConfig>): () => Running {
  let running: Running | undefined;
  beforeAll(async () => {
    const clock = new ManualClock();
    const config = orchestratorConfig(nats.url, { "Orchestrator.Auth.Token": TOKEN, ...extra });
    running = { orchestrator: await startOrchestrator(config, silentLogger, { clock }), config, clock };
  });
  afterAll(async () => {
    await running?.orchestrator.stop();
  });
  return () => running!;
}

async function send(subject: string, body: Record<string, unknown>): Promise<ProtocolResponse> {
  const reply = await nats.nc.request(subject, encode(body), { timeout: 5000 });
  return decode(ProtocolResponse, reply.data);
}

const request = (nodeId: string, method: string, body: Record<string, unknown>) =>
  send(`shoal.compute.${nodeId}.${method}`, { MessageID: randomUUID(), ...body });

const register = (info: ReturnType<typeof computeInfo>) => joinNode(nats.nc, info.NodeID, TOKEN, info);

/** What a join stores: the registration and the key's binding. */
const joined = (ids: string[]) =>
  ids.flatMap((id) => [`node-${id}:NodeCredentialBound`, `node-${id}:NodeRegistered`]).sort();

/** Every stored event as `stream:type`. */
const stored = async (config: ShoalConfig) => (await storedEvents(config.DataDir)).map((e) => `${e.stream}:${e.type}`);

/** The events appended since `before`, sorted: concurrent registrations append in any order. */
function added(before: string[], after: string[]): string[] {
  expect(after.slice(0, before.length)).toEqual(before);
  return after.slice(before.length).sort();
}

describe("registration rate", () => {
  const running = orchestratorFor({
    "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 2,
    "Orchestrator.NodeManager.RegistrationBurst": 5,
  });

  it("throttles a flood of new nodes with Unavailable and a retry hint, storing only what it admits", async () => {
    const { orchestrator, config, clock } = running();
    const before = await stored(config);
    const actors = orchestrator.manager.nodeCount;

    const ids = Array.from({ length: 40 }, (_, i) => `flood-${i}`);
    const replies = await Promise.all(ids.map((id) => register(computeInfo(id))));
    const admitted = ids.filter((_, i) => replies[i]!.Accepted);
    expect(admitted).toHaveLength(5);
    const refused = replies.filter((r) => !r.Accepted);
    expect(refused).toHaveLength(35);
    for (const r of refused) {
      expect(r.Code).toBe("Unavailable");
      expect(r.Reason).toMatch(
        /too many new nodes registering \(Orchestrator.NodeManager.MaxRegistrationsPerSecond=2, RegistrationBurst=5\); try again in 1s/,
      );
    }
    expect(added(before, await stored(config))).toEqual(joined(admitted));
    expect(orchestrator.manager.nodeCount).toBe(actors + 5);

    // Admitted nodes carry on, re-registering (an agent restart) and heartbeating, with the bucket empty.
    expect(await register(computeInfo(admitted[0]!))).toEqual({
      Accepted: true,
      Reason: "node already registered",
      Reconnect: false,
    });
    expect(await request(admitted[1]!, "heartbeat", { NodeID: admitted[1], Sequence: 1 })).toEqual({ Accepted: true });

    // The rate refills the bucket: 2 per second.
    await clock.advance(1000);
    const next = await Promise.all(["late-1", "late-2", "late-3"].map((id) => register(computeInfo(id))));
    expect(next.map((r) => (r.Accepted ? "ok" : r.Code)).sort()).toEqual(["Unavailable", "ok", "ok"]);
    expect(orchestrator.manager.nodeCount).toBe(actors + 7);
  });
});

describe("PENDING nodes under manual approval", () => {
  const running = orchestratorFor({
    "Orchestrator.NodeManager.ManualApproval": true,
    "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
    "Orchestrator.NodeManager.MaxPendingNodes": 4,
  });

  it("holds the cap against a flood of fake nodes until an operator acts", async () => {
    const { orchestrator, config } = running();
    const before = await stored(config);
    const ids = Array.from({ length: 30 }, (_, i) => `fake-${i}`);
    const replies = await Promise.all(ids.map((id) => register(computeInfo(id))));
    const admitted = ids.filter((_, i) => replies[i]!.Accepted);
    expect(admitted).toHaveLength(4);
    for (const r of replies.filter((r) => !r.Accepted)) {
      expect(r.Code).toBe("Forbidden");
      expect(r.Reason).toMatch(
        /the limit of 4 nodes awaiting approval \(Orchestrator.NodeManager.MaxPendingNodes\) is reached\. An operator must approve, reject or delete pending nodes/,
      );
    }
    const after = await stored(config);
    expect(added(before, after)).toEqual(joined(admitted));

    // Still full: a new node is refused, nothing stored.
    expect(await register(computeInfo("honest"))).toMatchObject({ Accepted: false, Code: "Forbidden" });
    expect(await stored(config)).toEqual(after);

    // The operator rejects one fake: a slot frees up.
    await orchestrator.manager.operatorAction(
      "reject",
      admitted[0]!,
      commandContext({ type: "operator", id: "alice" }),
    );
    expect(await register(computeInfo("honest"))).toEqual({
      Accepted: true,
      Reason: "node registered",
      Reconnect: false,
    });
    expect(await register(computeInfo("honest-2"))).toMatchObject({ Accepted: false, Code: "Forbidden" });
  });
});

describe("what nodes say about themselves", () => {
  const running = orchestratorFor({ "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0 });

  it("refuses bad labels and oversized node info as BadRequest with the reason, storing nothing", async () => {
    const { orchestrator, config } = running();
    expect(await register(computeInfo("good", { zone: "a" }))).toMatchObject({ Accepted: true });
    const before = await stored(config);
    const actors = orchestrator.manager.nodeCount;
    const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    const longKey = (i: number) => `${"p".repeat(187)}${String(i).padStart(2, "0")}/${"n".repeat(63)}`;
    const cases: [string, ReturnType<typeof computeInfo>, RegExp][] = [
      ["bad key", computeInfo("bad-1", { "bad key": "x" }), /label key "bad key": the name must be letters, digits/],
      [
        "bad prefix",
        computeInfo("bad-2", { "Example.com/zone": "x" }),
        /label key "Example.com\/zone": the prefix must be a DNS subdomain/,
      ],
      ["bad value", computeInfo("bad-3", { zone: "a b" }), /label value "a b" must be empty or/],
      [
        "long value",
        computeInfo("bad-4", { zone: "v".repeat(64) }),
        /label value "v{64}" is longer than 63 characters/,
      ],
      ["too many labels", { ...computeInfo("bad-5"), Labels: labels(65) }, /65 labels; a node may have at most 64/],
      ["long hostname", { ...computeInfo("bad-6"), Hostname: "h".repeat(254) }, /Hostname[\s\S]*at most 253/],
      [
        "too many engines",
        {
          ...computeInfo("bad-7"),
          ComputeNodeInfo: {
            ...computeInfo("bad-7").ComputeNodeInfo!,
            ExecutionEngines: Array.from({ length: 33 }, (_, i) => `e${i}`),
          },
        },
        /ExecutionEngines[\s\S]*at most 32/,
      ],
      [
        "oversized info",
        {
          ...computeInfo("bad-8"),
          Labels: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [longKey(i), "v".repeat(63)])),
        },
        /node info is \d+ bytes encoded; the limit is 16384/,
      ],
    ];
    for (const [name, info, reason] of cases) {
      const reply = await register(info);
      expect(reply, name).toMatchObject({ Accepted: false, Code: "BadRequest" });
      expect(reply.Reason, name).toMatch(/^invalid message: /);
      expect(reply.Reason, name).toMatch(reason);
      // The same rule holds for info reports of a registered node.
      const report = await request("good", "info", { Info: { ...info, NodeID: "good" } });
      expect(report, `${name} (info report)`).toMatchObject({ Accepted: false, Code: "BadRequest" });
    }
    expect(await stored(config)).toEqual(before);
    expect(orchestrator.manager.nodeCount).toBe(actors);
  });

  it("creates nothing for info, resources or heartbeats of nodes it does not know", async () => {
    const { orchestrator, config } = running();
    const before = await stored(config);
    const actors = orchestrator.manager.nodeCount;
    const resources = { AvailableCapacity: {}, QueueUsedCapacity: {}, RunningExecutions: 0, EnqueuedExecutions: 0 };
    for (let i = 0; i < 50; i++) {
      const id = `ghost-${i}`;
      const replies = await Promise.all([
        request(id, "info", { Info: computeInfo(id) }),
        request(id, "resources", { NodeID: id, Resources: resources }),
        request(id, "heartbeat", { NodeID: id, Sequence: 1 }),
      ]);
      for (const r of replies)
        expect(r).toEqual({ Accepted: false, Code: "NotFound", Reason: `node not registered: ${id}` });
    }
    expect(orchestrator.manager.nodeCount).toBe(actors);
    expect(await stored(config)).toEqual(before);
  });
});
