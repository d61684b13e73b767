import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  AckPolicy,
  Empty,
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  nkeys,
  type ConnectionOptions,
  type NatsConnection,
} from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { decode, encode } from "../../src/transport/codec.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { joinProof } from "../../src/transport/join-proof.ts";
import { ORCHESTRATOR_PERMISSIONS, ORCHESTRATOR_USER } from "../../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { userJwt } from "../../src/transport/nats-jwt/nats-jwt.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import {
  NatsOperator,
  joinLogin,
  loadOrCreateOperatorKeys,
  shoalAccountKey,
} from "../../src/transport/nats-jwt/nats-operator.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { testAgent } from "../support/test-agent.ts";
import { freePort } from "../support/nats-server.ts";
import { otherKey } from "../support/join-node.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents, storedStream } from "../support/stored-events.ts";

/**
 * The orchestrator's own nats-server as an attacker meets it: every role is tried on every
 * subject it must not use, against a real server with real agents.
 */
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
const agents: Record<string, { agent: ComputeAgent; dataDir: string }> = {};
const open: NatsConnection[] = [];

const login = async (options: Partial<ConnectionOptions>): Promise<NatsConnection> => {
  const nc = await connect({ servers: orchestrator.natsUrl, reconnect: false, ...options });
  open.push(nc);
  return nc;
};
const asJoiner = () => login({ authenticator: joinLogin(orchestrator.joinToken.token), inboxPrefix: "_INBOX_JOIN" });
const asReader = () =>
  login({
    authenticator: credsAuthenticator(readFileSync(join(config.DataDir, "credentials", "nats-events-reader.creds"))),
  });
/** The user JWT the node's agent got with its join reply (kept beside its key). */
const nodeJwt = (id: string) => readFileSync(join(agents[id]!.dataDir, "credentials", `${id}.jwt`), "utf8").trim();
const asNode = (id: string, jwt = nodeJwt(id)) => {
  const key = loadOrCreateNodeKey(agents[id]!.dataDir, id);
  return login({ authenticator: jwtLogin(jwt, key), inboxPrefix: `_INBOX_NODE.${id}` });
};
/** A login with the orchestrator's permissions, as the orchestrator issues itself one at each start. */
const asOrchestrator = () => {
  const operator = new NatsOperator(loadOrCreateOperatorKeys(join(config.DataDir, "credentials")), {
    joinToken: orchestrator.joinToken.token,
    jetStreamDiskBytes: 1,
  });
  const key = newNkey("user");
  return login({
    authenticator: jwtLogin(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key),
  });
};

const eventsOf = (nodeId: string) => storedStream(config.DataDir, `node-${nodeId}`);

/** The node's membership and credential events: its health may change in between (it is cut off). */
const membershipOf = async (nodeId: string) => (await eventsOf(nodeId)).filter((e) => !e.type.startsWith("NodeBecame"));

/** A publish NATS refuses comes back to the requester as a permissions violation. */
async function expectPublishRefused(nc: NatsConnection, subject: string, data: Uint8Array = Empty) {
  await expect(nc.request(subject, data, { timeout: 2000 }), subject).rejects.toMatchObject({
    code: "PERMISSIONS_VIOLATION",
  });
}

/** A subscription NATS refuses ends with a permissions violation instead of delivering anything. */
async function expectSubscribeRefused(nc: NatsConnection, subject: string, queue?: string) {
  const sub = nc.subscribe(subject, queue === undefined ? {} : { queue });
  const outcome = (async () => {
    for await (const _ of sub) return "delivered";
    return "closed";
  })();
  await expect(outcome, `${subject}${queue ? ` (queue ${queue})` : ""}`).rejects.toMatchObject({
    code: "PERMISSIONS_VIOLATION",
  });
}

function startAgent(id: string): ComputeAgent {
  const dataDir = agents[id]?.dataDir ?? tempDir(`shoal-${id}-`);
  const agent = testAgent({
    nodeId: id,
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    dataDir,
    infoUpdateMs: 5000,
    resourceUpdateMs: 5000,
  });
  agents[id] = { agent, dataDir };
  return agent;
}

beforeAll(async () => {
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-natssec-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.TLS.Disable": true, // TLS is not under test here
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NodeManager.DisconnectTimeout": 1500,
    "Orchestrator.NodeManager.UnknownTimeout": 60_000,
  };
  orchestrator = await startOrchestrator(config, silentLogger);
  await startAgent("node-a").start();
  await startAgent("node-b").start();
});

afterAll(async () => {
  await Promise.allSettled(open.map((nc) => nc.close()));
  for (const { agent } of Object.values(agents)) await agent.stop();
  await orchestrator?.stop();
});

describe("the orchestrator's nats-server", () => {
  it("generates a join token on first start, kept for the owner only, and binds each joined node's key in its history", async () => {
    expect(orchestrator.joinToken.file).toBe(join(config.DataDir, "credentials", "join-token"));
    expect(statSync(orchestrator.joinToken.file!).mode & 0o777).toBe(0o600);
    expect(statSync(join(config.DataDir, "credentials")).mode & 0o777).toBe(0o700);
    const events = await eventsOf("node-a");
    expect(events.map((e) => e.type)).toEqual(["NodeRegistered", "NodeCredentialBound"]);
    expect(events[1]).toMatchObject({
      data: { PublicKey: agents["node-a"]!.agent.publicKey },
      metadata: { actor: { type: "node", id: "node-a" } },
    });
  });

  it("admits no anonymous client and no wrong secret", async () => {
    const refused = { code: "AUTHORIZATION_VIOLATION" };
    await expect(login({})).rejects.toMatchObject(refused);
    await expect(login({ user: "shoal-orchestrator", pass: "guess" })).rejects.toMatchObject(refused);
    // The join login's password is derived from the token; the token itself is not a password.
    await expect(login({ user: "shoal-join", pass: orchestrator.joinToken.token })).rejects.toMatchObject(refused);
    await expect(login({ authenticator: nkeyAuthenticator(nkeys.createUser().getSeed()) })).rejects.toMatchObject(
      refused,
    );
    // A node's own key alone is not a login: its JWT is.
    await expect(
      login({ authenticator: nkeyAuthenticator(loadOrCreateNodeKey(agents["node-a"]!.dataDir, "node-a").seed) }),
    ).rejects.toMatchObject(refused);
    // A wrong token derives another account, which the server does not know.
    await expect(login({ authenticator: joinLogin("not-the-token") })).rejects.toMatchObject(refused);
    // The account's identity key, which token holders can derive, signs no user the server accepts (strict signing-key
    // usage).
    const key = newNkey("user");
    const account = shoalAccountKey(orchestrator.joinToken.token);
    await expect(
      login({ authenticator: jwtLogin(userJwt(account, key.publicKey, "self-made", undefined), key) }),
    ).rejects.toMatchObject(refused);
  });

  it("ends an agent whose join token is wrong, with the reason", async () => {
    const agent = testAgent({
      nodeId: "intruder",
      orchestrators: [orchestrator.natsUrl],
      token: "not-the-token",
      initialBackoffMs: 50,
      maxBackoffMs: 200,
    });
    await expect(agent.start()).rejects.toThrow(
      "the orchestrator's NATS refused the join token: check Compute.Auth.Token",
    );
    expect(await eventsOf("intruder")).toEqual([]);
  });

  it("lets many nodes join at once: none is turned away", async () => {
    // Staggered, so that later logins arrive while earlier joins are being answered.
    const ids = Array.from({ length: 12 }, (_, i) => `crowd-${i}`);
    const crowd = ids.map((id) => startAgent(id));
    await Promise.all(
      crowd.map(async (a, i) => {
        await new Promise((r) => setTimeout(r, i * 25));
        await a.start();
      }),
    );
    // Membership only: with this file's 1.5 s DisconnectTimeout a node that waited out several reloads may have been
    // silent a moment.
    for (const id of ids)
      expect((await membershipOf(id)).map((e) => e.type)).toEqual(["NodeRegistered", "NodeCredentialBound"]);
    for (const a of crowd) await a.stop();
  });

  it("lets the join token ask to join and nothing else", async () => {
    const nc = await asJoiner();
    await expectPublishRefused(
      nc,
      "shoal.compute.node-b.heartbeat",
      encode({ MessageID: randomUUID(), NodeID: "node-b", Sequence: 1 }),
    );
    await expectPublishRefused(nc, "shoal.events.node.node-b.NodeApproved");
    await expectPublishRefused(nc, "$JS.API.INFO");
    await expectSubscribeRefused(nc, "shoal.join.*", "shoal-orchestrators");
    await expectSubscribeRefused(nc, "shoal.compute.*.*", "shoal-orchestrators");
    await expectSubscribeRefused(nc, "shoal.events.>");
    await expectSubscribeRefused(nc, "_INBOX_NODE.node-b.>");
  });

  it("refuses another key for a node whose key is live, storing nothing", async () => {
    const before = (await eventsOf("node-b")).length;
    const nc = await asJoiner();
    // Deliberately a fresh key: not the one node-b's agent holds and is connected with.
    const reply = await new ComputeClient(nc, "node-b").join(
      computeInfo("node-b"),
      otherKey(),
      orchestrator.joinToken.token,
    );
    expect(reply).toMatchObject({ Accepted: false, Code: "Conflict" });
    expect((await eventsOf("node-b")).length).toBe(before);
  });

  it("refuses a join token holder who names node B's own public key without holding its secret", async () => {
    const before = (await eventsOf("node-b")).length;
    const nc = await asJoiner();
    // node-b's public key is in its history for anyone to read; its seed is not.
    const borrowed = { publicKey: agents["node-b"]!.agent.publicKey, sign: otherKey().sign };
    const labels = { ...computeInfo("node-b"), Labels: { ...computeInfo("node-b").Labels, zone: "attacker" } };
    const reply = await new ComputeClient(nc, "node-b").join(labels, borrowed, orchestrator.joinToken.token);
    expect(reply).toMatchObject({
      Accepted: false,
      Code: "Unauthorized",
      Reason: expect.stringMatching(/signature was not made with the key/),
    });
    expect((await eventsOf("node-b")).length).toBe(before);
  });

  it("lets node A speak only for itself: it cannot register, heartbeat, report or receive work as node B", async () => {
    const a = await asNode("node-a");
    const own = decode(
      ProtocolResponse,
      (
        await a.request(
          "shoal.compute.node-a.heartbeat",
          encode({ MessageID: randomUUID(), NodeID: "node-a", Sequence: 9 }),
        )
      ).data,
    );
    expect(own).toEqual({ Accepted: true });

    const info = computeInfo("node-b");
    const messageId = randomUUID();
    const publicKey = loadOrCreateNodeKey(agents["node-a"]!.dataDir, "node-a").publicKey;
    await expectPublishRefused(
      a,
      "shoal.join.node-b",
      encode({
        MessageID: messageId,
        Info: info,
        PublicKey: publicKey,
        Proof: joinProof(orchestrator.joinToken.token, "node-b", publicKey, messageId),
      }),
    );
    await expectPublishRefused(
      a,
      "shoal.compute.node-b.heartbeat",
      encode({ MessageID: randomUUID(), NodeID: "node-b", Sequence: 1 }),
    );
    await expectPublishRefused(a, "shoal.compute.node-b.info", encode({ MessageID: randomUUID(), Info: info }));
    await expectPublishRefused(a, "shoal.compute.node-b.resources");
    await expectPublishRefused(a, "shoal.events.node.node-b.NodeApproved");
    await expectPublishRefused(a, "$JS.API.STREAM.PURGE.SHOAL_EVENTS");
    await expectSubscribeRefused(a, "_INBOX_NODE.node-b.>");
    await expectSubscribeRefused(a, "shoal.work.node-b.>");
    // B's heartbeat refusals are B's alone: A can neither read nor forge them.
    await expectSubscribeRefused(a, "shoal.work.node-b.heartbeat-refused");
    await expectPublishRefused(
      a,
      "shoal.work.node-b.heartbeat-refused",
      encode({ Accepted: false, Code: "NotFound", Reason: "forged" }),
    );
    await expectSubscribeRefused(a, "shoal.compute.*.*", "shoal-orchestrators");
    await expectSubscribeRefused(a, "shoal.join.*", "shoal-orchestrators");
    await expectSubscribeRefused(a, "shoal.events.>");
    await expectSubscribeRefused(a, "_INBOX.>");
  });

  it("answers only on the sender's own inbox: a node or the join login cannot make the orchestrator publish events or into another node's subjects", async () => {
    const reader = await asReader();
    // Only the subjects the attack names: real events keep flowing meanwhile.
    // node-b joined APPROVED and is never deleted here: no real event ever has these subjects.
    const forged = [
      "shoal.events.node.node-b.NodeApproved",
      "shoal.events.node.node-b.NodeDeleted",
      "shoal.events.node.node-b.NodeForged",
    ];
    const seen: string[] = [];
    const watches = forged.map((subject) => reader.subscribe(subject, { callback: (_e, m) => seen.push(m.subject) }));
    const jsm = await reader.jetstreamManager();
    const a = await asNode("node-a");
    const bInbox: string[] = [];
    const b = await asNode("node-b");
    // Only the forged reply subject: node-b's own agent gets real replies on its inbox meanwhile.
    b.subscribe("_INBOX_NODE.node-b.stolen", { callback: (_e, m) => bInbox.push(m.subject) });
    // Replies to a node's own calls come under its work subjects: those are B's alone too.
    b.subscribe("shoal.work.node-b.reply.stolen.>", { callback: (_e, m) => bInbox.push(m.subject) });
    await b.flush();
    const heartbeat = encode({ MessageID: randomUUID(), NodeID: "node-a", Sequence: 1 });
    a.publish("shoal.compute.node-a.heartbeat", heartbeat, { reply: "shoal.events.node.node-b.NodeApproved" });
    a.publish("shoal.compute.node-a.heartbeat", Empty, { reply: "shoal.events.node.node-b.NodeDeleted" });
    a.publish("shoal.compute.node-a.heartbeat", heartbeat, { reply: "_INBOX_NODE.node-b.stolen" });
    a.publish("shoal.compute.node-a.heartbeat", heartbeat, { reply: "shoal.work.node-b.reply.stolen.1" });
    const joiner = await asJoiner();
    joiner.publish("shoal.join.evil", Empty, { reply: "shoal.events.node.node-b.NodeForged" });
    joiner.publish("shoal.join.evil", Empty, { reply: "_INBOX_NODE.node-b.stolen" });
    // A join naming node-b may not be answered in node-b's work subjects: anyone with the token can send one.
    joiner.publish("shoal.join.node-b", Empty, { reply: "shoal.work.node-b.reply.stolen.2" });
    // Its own inbox is still answered: the orchestrator did get the messages.
    const own = decode(
      ProtocolResponse,
      (await a.request("shoal.compute.node-a.heartbeat", heartbeat, { timeout: 2000 })).data,
    );
    expect(own).toEqual({ Accepted: true });
    // …and so are its own work subjects, where ComputeClient takes its replies.
    const ownWork = a.subscribe("shoal.work.node-a.reply.mine.>", { max: 1 });
    a.publish("shoal.compute.node-a.heartbeat", heartbeat, { reply: "shoal.work.node-a.reply.mine.1" });
    for await (const m of ownWork) expect(decode(ProtocolResponse, m.data)).toEqual({ Accepted: true });
    await reader.flush();
    expect(seen).toEqual([]);
    expect(bInbox).toEqual([]);
    for (const subject of forged) {
      await expect(jsm.streams.getMessage("SHOAL_EVENTS", { last_by_subj: subject }), subject).rejects.toThrow(
        /no message found/,
      );
    }
    for (const w of watches) w.unsubscribe();
  });

  it("lets node B's health decay while node A heartbeats for it: nothing A sends reaches B", async () => {
    await agents["node-b"]!.agent.stop();
    const a = await asNode("node-a");
    const spoofing = setInterval(
      () =>
        a.publish("shoal.compute.node-b.heartbeat", encode({ MessageID: randomUUID(), NodeID: "node-b", Sequence: 1 })),
      100,
    );
    try {
      await waitFor(
        async () => (await eventsOf("node-b")).some((e) => e.type === "NodeBecameUnhealthy"),
        10_000,
        () => "node-b UNHEALTHY",
      );
    } finally {
      clearInterval(spoofing);
    }
    const events = await eventsOf("node-b");
    expect(events.map((e) => e.type)).toEqual(["NodeRegistered", "NodeCredentialBound", "NodeBecameUnhealthy"]);
    expect(events.every((e) => ["node-b", "node-manager"].includes((e.metadata.actor as { id: string }).id))).toBe(
      true,
    );
  });

  it("lets readers receive the signed audit checkpoints, which only the orchestrator may publish", async () => {
    const reader = await asReader();
    const sub = reader.subscribe("shoal.audit.checkpoints", { max: 1 });
    const got = (async () => {
      for await (const m of sub) return m.string();
      return "closed";
    })();
    await reader.flush();
    const checkpoint = JSON.stringify({ position: 1, link: "00".repeat(32) });
    (await asOrchestrator()).publish("shoal.audit.checkpoints", checkpoint);
    expect(await got).toBe(checkpoint);
    for (const nc of [reader, await asJoiner(), await asNode("node-a")])
      await expectPublishRefused(nc, "shoal.audit.checkpoints", new TextEncoder().encode(checkpoint));
  });

  it("lets readers consume SHOAL_EVENTS but not purge, delete or forge; consumers only ever see stored events", async () => {
    const reader = await asReader();
    const jsm = await reader.jetstreamManager();
    await jsm.consumers.add("SHOAL_EVENTS", { durable_name: "auditor", ack_policy: AckPolicy.Explicit });
    await expect(jsm.streams.purge("SHOAL_EVENTS")).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    await expect(jsm.streams.delete("SHOAL_EVENTS")).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    await expect(jsm.streams.update("SHOAL_EVENTS", { subjects: [">"] })).rejects.toMatchObject({
      code: "PERMISSIONS_VIOLATION",
    });
    // Readers share the login: none may delete a consumer, another system's durable included.
    await expect(jsm.consumers.delete("SHOAL_EVENTS", "auditor")).rejects.toMatchObject({
      code: "PERMISSIONS_VIOLATION",
    });
    const forged = new TextEncoder().encode(
      JSON.stringify({ id: randomUUID(), type: "NodeApproved", stream: "node-node-b" }),
    );
    for (const nc of [reader, await asJoiner(), await asNode("node-a")])
      await expectPublishRefused(nc, "shoal.events.node.node-b.NodeApproved", forged);

    // Even the orchestrator's own login may not purge or delete the stream downstream relies on.
    const self = await asOrchestrator();
    const selfJsm = await self.jetstreamManager();
    await expect(selfJsm.streams.purge("SHOAL_EVENTS")).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    await expect(selfJsm.streams.delete("SHOAL_EVENTS")).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });

    const stored = await storedEvents(config.DataDir);
    await orchestrator.publisher.waitFor(stored.at(-1)!.position);
    const consumer = await reader.jetstream().consumers.get("SHOAL_EVENTS", "auditor");
    const received: string[] = [];
    for await (const m of await consumer.fetch({ max_messages: 1000, expires: 2000 })) {
      received.push((m.json() as { id: string }).id);
      m.ack();
    }
    // Live nodes may cause events after `stored` was read: the consumer sees at least those, and
    // exactly the store's events in the store's order.
    expect(received.length).toBeGreaterThanOrEqual(stored.length);
    const storedNow = await storedEvents(config.DataDir);
    expect(received).toEqual(storedNow.slice(0, received.length).map((e) => e.id));
  });

  it("revokes a node's key on reject (NATS drops it), reinstates it on approve, and keeps a deleted node out", async () => {
    const operator = (reason: string) => commandContext({ type: "operator", id: "alice" }, { reason });
    const key = agents["node-a"]!.agent.publicKey;
    const jwtBeforeReject = nodeJwt("node-a");
    await orchestrator.manager.operatorAction("reject", "node-a", operator("not ours"));
    await expect(asNode("node-a", jwtBeforeReject)).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });
    const history = await membershipOf("node-a");
    expect(history.slice(-2)).toMatchObject([
      { type: "NodeRejected", metadata: { actor: { id: "alice" }, reason: "not ours" } },
      { type: "NodeCredentialRevoked", data: { PublicKey: key, Reason: "rejected" } },
    ]);

    await orchestrator.manager.operatorAction("approve", "node-a", operator("ours after all"));
    expect((await membershipOf("node-a")).at(-1)).toMatchObject({
      type: "NodeCredentialBound",
      data: { PublicKey: key, Reinstated: true },
    });
    // The running agent, refused with its revoked JWT, joins again by itself and gets a new one for the reinstated key.
    // (The server drops the old connection a moment after the push: heartbeats sent meanwhile do not count, only those
    // after a new JWT.)
    const jwtFile = join(agents["node-a"]!.dataDir, "credentials", "node-a.jwt");
    await waitFor(
      () => existsSync(jwtFile) && nodeJwt("node-a") !== jwtBeforeReject,
      10_000,
      () => "node-a given a new JWT",
    );
    const since = orchestrator.manager.live("node-a")!.lastHeartbeat!;
    await waitFor(
      () => (orchestrator.manager.live("node-a")?.lastHeartbeat ?? 0) > since + 500,
      10_000,
      () => "node-a heartbeating again",
    );
    await (await asNode("node-a")).close();
    // The JWT issued before the reject stays revoked.
    await expect(asNode("node-a", jwtBeforeReject)).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });
    const jwtBeforeDelete = nodeJwt("node-a");

    await orchestrator.manager.operatorAction("delete", "node-a", operator("decommissioned"));
    await expect(asNode("node-a", jwtBeforeDelete)).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });
    // Its agent asks to join again only if it is still registered: a deleted node stays out until its agent restarts.
    await waitFor(
      () => !agents["node-a"]!.agent.isRegistered,
      10_000,
      () => "node-a's agent told it was removed",
    );
    expect((await membershipOf("node-a")).slice(-2).map((e) => e.type)).toEqual([
      "NodeCredentialRevoked",
      "NodeDeleted",
    ]);
  });
});
