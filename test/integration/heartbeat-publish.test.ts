import { existsSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { connect, type Msg, type NatsConnection } from "nats";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { AgentOutcome, ComputeAgent } from "../../src/compute/compute-agent.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { decode, encode } from "../../src/transport/codec.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedStream } from "../support/stored-events.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * Heartbeats as Bacalhau ≥ 1.6 sends them: published, no reply; a refusal on the node's own
 * subject. On an open nats-server (an external NATS without per-node users), where a test
 * connection may publish as any node and watch any subject: how per-node keys confine the same
 * traffic is nats-security.test.ts's part.
 */
const DISCONNECT_TIMEOUT_MS = 1000;
const TOKEN = "heartbeat-token";
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let dataDir: string;
let nc: NatsConnection;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  nats = await TestNatsServer.start();
  dataDir = tempDir();
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, {
      DataDir: dataDir,
      "Orchestrator.Auth.Token": TOKEN,
      "Orchestrator.NodeManager.DisconnectTimeout": DISCONNECT_TIMEOUT_MS,
    }),
    silentLogger,
  );
  nc = await connect({ servers: nats.url, name: "heartbeat-test" });
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await nc?.close();
  await orchestrator?.stop();
  await nats?.stop();
});

/** Every message on these subjects, as it arrives. */
async function watch(...subjects: string[]): Promise<Msg[]> {
  const seen: Msg[] = [];
  for (const subject of subjects) nc.subscribe(subject, { callback: (_e, m) => seen.push(m) });
  await nc.flush();
  return seen;
}

function recordingAgent(nodeId: string) {
  const outcomes: AgentOutcome[] = [];
  const records: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const agentDataDir = tempDir(`shoal-${nodeId}-`);
  // Node info and resources only at start: every message afterwards is a heartbeat.
  const agent: ComputeAgent = testAgent({
    nodeId,
    orchestrators: [nats.url],
    token: TOKEN,
    dataDir: agentDataDir,
    logger,
    infoUpdateMs: 3_600_000,
    resourceUpdateMs: 3_600_000,
    observe: (o) => outcomes.push(o),
  });
  cleanups.push(() => agent.stop());
  const heartbeats = (outcome: AgentOutcome["outcome"]) =>
    outcomes.filter((o) => o.what === "heartbeat" && o.outcome === outcome);
  return { agent, outcomes, records, heartbeats, sentinel: join(agentDataDir, `${nodeId}.registration.lock`) };
}

const refusalOf = (m: Msg) => decode(ProtocolResponse, m.data);

describe("published heartbeats", () => {
  it("keep a node HEALTHY for many DisconnectTimeouts with no reply sent to it", async () => {
    const { agent, heartbeats } = recordingAgent("steady");
    await agent.start();
    const answers = await watch("_INBOX_NODE.steady.>", "shoal.work.steady.>");
    const from = heartbeats("sent").length;
    const since = Date.now();
    // Three DisconnectTimeouts' worth of heartbeats (every 200 ms).
    await waitFor(
      () => heartbeats("sent").length >= from + 15 && Date.now() - since >= 3 * DISCONNECT_TIMEOUT_MS,
      20_000,
      () => "15 heartbeats",
    );
    await nc.flush();
    expect(answers.map((m) => m.subject)).toEqual([]);
    expect(heartbeats("refused")).toEqual([]);
    expect(heartbeats("failed")).toEqual([]);
    expect((orchestrator.manager.live("steady")?.lastHeartbeat ?? 0) >= since).toBe(true);
    const types = (await storedStream(dataDir, "node-steady")).map((e) => e.type);
    expect(types).not.toContain("NodeBecameUnhealthy");
    expect(types.slice(0, 2)).toEqual(["NodeRegistered", "NodeCredentialBound"]);
  });

  it("tell a deleted node so on its own subject, and its agent stops reporting and forgets its registration", async () => {
    const { agent, records, heartbeats, sentinel } = recordingAgent("doomed");
    await agent.start();
    await waitFor(
      () => heartbeats("sent").length >= 2,
      10_000,
      () => "heartbeating",
    );
    expect(existsSync(sentinel)).toBe(true);
    const refusals = await watch("shoal.work.doomed.heartbeat-refused");

    await orchestrator.manager.operatorAction("delete", "doomed", commandContext({ type: "operator", id: "alice" }));
    await waitFor(
      () => heartbeats("refused").length > 0,
      10_000,
      () => "the heartbeat refused",
    );
    expect(heartbeats("refused")).toEqual([{ what: "heartbeat", outcome: "refused", code: "NotFound" }]);
    expect(refusals.map(refusalOf)).toEqual([
      { Accepted: false, Code: "NotFound", Reason: "node not registered: doomed" },
    ]);
    expect(agent.isRegistered).toBe(false);
    expect(existsSync(sentinel)).toBe(false);
    expect(
      records.filter((r) => r.msg === "orchestrator has removed this node; restart the agent to register again"),
    ).toMatchObject([{ reason: "node not registered: doomed" }]);

    // It stays out: no more heartbeats until it is restarted.
    const sent = heartbeats("sent").length;
    await new Promise((r) => setTimeout(r, 1000)); // five heartbeat intervals
    expect(heartbeats("sent").length).toBe(sent);
  });

  it("refuse a node at most once per interval however fast it publishes, each node on its own subject", async () => {
    const refusals = await watch("shoal.work.*.heartbeat-refused");
    for (let i = 0; i < 200; i++)
      nc.publish("shoal.compute.ghost-1.heartbeat", encode({ NodeID: "ghost-1", Sequence: i }));
    nc.publish("shoal.compute.ghost-2.heartbeat", encode({ NodeID: "ghost-2", Sequence: 1 }));
    // speaks for another node
    nc.publish("shoal.compute.ghost-3.heartbeat", encode({ NodeID: "ghost-2", Sequence: 1 }));
    // agent-shaped, but no valid node id
    nc.publish("shoal.compute._ghost.heartbeat", encode({ NodeID: "_ghost", Sequence: 1 }));
    nc.publish("shoal.compute.ghost-4.heartbeat", encode({ NodeID: "ghost-4", Sequence: -1, Extra: true }));
    // One publisher's messages arrive in order: once ghost-4's refusal is here, every earlier one was handled.
    await waitFor(
      () => refusals.some((m) => m.subject === "shoal.work.ghost-4.heartbeat-refused"),
      10_000,
      () => "ghost-4 refused",
    );
    await nc.flush();
    const bySubject = refusals.map((m) => [m.subject, refusalOf(m)]);
    expect(bySubject).toEqual([
      [
        "shoal.work.ghost-1.heartbeat-refused",
        { Accepted: false, Code: "NotFound", Reason: "node not registered: ghost-1" },
      ],
      [
        "shoal.work.ghost-2.heartbeat-refused",
        { Accepted: false, Code: "NotFound", Reason: "node not registered: ghost-2" },
      ],
      [
        "shoal.work.ghost-3.heartbeat-refused",
        { Accepted: false, Code: "BadRequest", Reason: "subject is for node ghost-3 but the message is from ghost-2" },
      ],
      [
        "shoal.work._ghost.heartbeat-refused",
        {
          Accepted: false,
          Code: "BadRequest",
          Reason: expect.stringMatching(/^invalid message: .*a node id is 1-128 letters/s),
        },
      ],
      [
        "shoal.work.ghost-4.heartbeat-refused",
        { Accepted: false, Code: "BadRequest", Reason: expect.stringMatching(/^invalid message: /) },
      ],
    ]);
  });

  it("bring an UNHEALTHY node back HEALTHY, then keep it so without writing", async () => {
    expect(await joinNode(nc, "lazarus", TOKEN)).toMatchObject({ Accepted: true });
    const types = async () => (await storedStream(dataDir, "node-lazarus")).map((e) => e.type);
    await waitFor(
      async () => (await types()).includes("NodeBecameUnhealthy"),
      10_000,
      () => "lazarus UNHEALTHY",
    );
    const refusals = await watch("shoal.work.lazarus.heartbeat-refused");
    const beat = (Sequence: number) =>
      nc.publish("shoal.compute.lazarus.heartbeat", encode({ NodeID: "lazarus", Sequence }));
    beat(1);
    await waitFor(
      async () => (await types()).includes("NodeBecameHealthy"),
      10_000,
      () => "lazarus HEALTHY again",
    );
    // Healthy now: each heartbeat is recorded in memory, and nothing more is stored.
    const stored = (await types()).length;
    const before = orchestrator.manager.live("lazarus")?.lastHeartbeat ?? 0;
    await new Promise((r) => setTimeout(r, 20));
    beat(2);
    await waitFor(
      () => (orchestrator.manager.live("lazarus")?.lastHeartbeat ?? 0) > before,
      10_000,
      () => "the heartbeat recorded",
    );
    await nc.flush();
    expect((await types()).length).toBe(stored);
    expect(refusals).toEqual([]);
  });

  it("record nothing for either node when one registered node's heartbeat names another", async () => {
    for (const id of ["abel", "cain"]) expect(await joinNode(nc, id, TOKEN)).toMatchObject({ Accepted: true });
    const refusals = await watch("shoal.work.abel.heartbeat-refused", "shoal.work.cain.heartbeat-refused");
    const last = () => ["abel", "cain"].map((id) => orchestrator.manager.live(id)?.lastHeartbeat);
    const before = last();
    await new Promise((r) => setTimeout(r, 20));
    // Well-formed and from a registered node, on a registered node's subject: only not its own.
    nc.publish("shoal.compute.cain.heartbeat", encode({ NodeID: "abel", Sequence: 1 }));
    await waitFor(
      () => refusals.length > 0,
      10_000,
      () => "the heartbeat refused",
    );
    expect(refusals.map((m) => [m.subject, refusalOf(m)])).toEqual([
      [
        "shoal.work.cain.heartbeat-refused",
        { Accepted: false, Code: "BadRequest", Reason: "subject is for node cain but the message is from abel" },
      ],
    ]);
    expect(last()).toEqual(before);
  });

  it("still answer request heartbeats of older agents, with a MessageID, accepted or refused, and publish no refusal for them", async () => {
    expect(await joinNode(nc, "elder", TOKEN)).toMatchObject({ Accepted: true });
    const refusals = await watch("shoal.work.elder.heartbeat-refused", "shoal.work.ghost-9.heartbeat-refused");
    const ask = async (subject: string, body: Record<string, unknown>) =>
      refusalOf(await nc.request(subject, encode(body), { timeout: 5000 }));
    expect(
      await ask("shoal.compute.elder.heartbeat", { MessageID: randomUUID(), NodeID: "elder", Sequence: 1 }),
    ).toEqual({ Accepted: true });
    expect(await ask("shoal.compute.elder.heartbeat", { NodeID: "elder", Sequence: 2 })).toEqual({ Accepted: true });
    expect(
      await ask("shoal.compute.ghost-9.heartbeat", { MessageID: randomUUID(), NodeID: "ghost-9", Sequence: 1 }),
    ).toEqual({
      Accepted: false,
      Code: "NotFound",
      Reason: "node not registered: ghost-9",
    });
    // Not rate-limited: the asker gets each answer it waits for.
    expect(
      await ask("shoal.compute.ghost-9.heartbeat", { MessageID: randomUUID(), NodeID: "ghost-9", Sequence: 2 }),
    ).toMatchObject({ Code: "NotFound" });
    await nc.flush();
    expect(refusals).toEqual([]);
    expect((orchestrator.manager.live("elder")?.lastHeartbeat ?? 0) > 0).toBe(true);
  });
});
