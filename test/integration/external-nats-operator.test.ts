import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { connect, type ConnectionOptions, type NatsConnection } from "nats";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { natsOperatorCommand } from "../../src/cli/commands/nats-operator-command.ts";
import { LEASE_BUCKET } from "../../src/orchestrator/modules/cluster-module.ts";
import { OPERATOR_CONFIG_FILE } from "../../src/orchestrator/nats-operator-files.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import {
  ORCHESTRATOR_PERMISSIONS,
  ORCHESTRATOR_USER,
  SYSTEM_INBOX_PREFIX,
} from "../../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { AccountLookupUnanswered, lookupAccountJwt } from "../../src/transport/nats-jwt/lookup-account-jwt.ts";
import { NatsJwtGate } from "../../src/transport/nats-jwt/nats-jwt-gate.ts";
import { decodeJwt, jetStreamDiskOf } from "../../src/transport/nats-jwt/nats-jwt.ts";
import { newNkey, type NatsNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, joinLogin, loadOperatorKeys } from "../../src/transport/nats-jwt/nats-operator.ts";
import { EVENTS_STREAM, JOIN_INBOX_PREFIX } from "../../src/transport/subjects.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { computeInfo, orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { jwtLoginAdmitted } from "../support/jwt-login-admitted.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * An external NATS cluster with Shoal as its operator (`shoal nats-operator`): three servers with a full account
 * resolver, an orchestrator connected to one of them issuing node logins that every server admits, and a revocation
 * pushed to one server reaching them all.
 */
const TOKEN = "shoal-join_external-operator";
const SERVERS = ["n1", "n2", "n3"] as const;
let cluster: TestNatsCluster;
let orchestrator: RunningOrchestrator;
let keysDir: string;
const base = { "Orchestrator.Auth.Token": TOKEN, "Orchestrator.NATS.JetStreamMaxStore": 64 * 1024 * 1024 };
const alice = commandContext({ type: "operator", id: "alice" });
/** A key revoked in the first test, with the JWT it was issued before. */
let revoked: { readonly key: NatsNkey; readonly jwt: string } | undefined;
/** A login every server admits (the orchestrator's kind), issued by the test's own copy of the operator. */
let adminLogin: () => Partial<ConnectionOptions>;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  keysDir = join(tempDir("shoal-nats-operator-"), "operator");
  await natsOperator();
  const operator = new NatsOperator(loadOperatorKeys(keysDir), { joinToken: TOKEN, jetStreamDiskBytes: 0 });
  adminLogin = () => {
    const key = newNkey("user");
    return {
      authenticator: jwtLogin(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key),
    };
  };
  cluster = await TestNatsCluster.start(3, {
    include: join(dirname(keysDir), OPERATOR_CONFIG_FILE),
    login: adminLogin,
  });
  cleanups.push(() => cluster.stop());
  orchestrator = await startOrchestrator(
    orchestratorConfig(cluster.url("n1"), { ...base, "Orchestrator.NATS.OperatorDir": keysDir }),
    silentLogger,
  );
  cleanups.push(() => orchestrator.stop());
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it("admits a node joined through one server on every server, and cuts it off everywhere once rejected", async () => {
  const key = newNkey("user");
  const jwt = await joinAs(cluster.url("n1"), "edge-1", key);
  for (const server of SERVERS) expect(await jwtLoginAdmitted(cluster.url(server), jwt, key)).toBe(true);

  const live: NatsConnection = await connect({
    servers: cluster.url("n3"),
    authenticator: jwtLogin(jwt, key),
    reconnect: false,
  });
  cleanups.push(() => live.close());
  const dropped = live.closed();

  await orchestrator.manager.operatorAction("reject", "edge-1", alice);
  // Server 1 applied it when the call returned; the others have it from their resolver's peers.
  expect(await jwtLoginAdmitted(cluster.url("n1"), jwt, key)).toBe(false);
  await waitFor(async () => !(await jwtLoginAdmitted(cluster.url("n2"), jwt, key)), 10_000);
  await waitFor(async () => !(await jwtLoginAdmitted(cluster.url("n3"), jwt, key)), 10_000);
  await expect(Promise.race([dropped.then(() => "dropped"), sleep(10_000).then(() => "still open")])).resolves.toBe(
    "dropped",
  );
  revoked = { key, jwt };
}, 60_000);

it("has a new node join through the join login on a cluster whose servers gossip each other's URLs", async ({
  onTestFinished,
}) => {
  // Its own key, unknown to the servers yet, is refused on every server; each server's INFO names the others, which
  // must not keep that refused login going round them forever instead of falling back to the join login.
  const { logger, messages } = capturedLogger();
  const named = [cluster.url("n1"), cluster.url("n2")];
  const agent = testAgent({ nodeId: "edge-3", orchestrators: named, token: TOKEN, logger });
  onTestFinished(() => agent.stop());
  await agent.start();
  expect(agent.isRegistered).toBe(true);
  expect(orchestrator.manager.isRegistered("edge-3")).toBe(true);
  // It fails over only among the servers it was given, and says so when the cluster has more.
  const [warning] = messages("fails over only among those");
  expect(warning).toMatchObject({ orchestrators: named });
  expect(warning?.clusterServers).toHaveLength(3);
}, 30_000);

it("stops a node whose join token every server refuses, saying why", async ({ onTestFinished }) => {
  const agent = testAgent({ nodeId: "edge-6", orchestrators: cluster.urls, token: "shoal-join_not-the-one" });
  onTestFinished(() => agent.stop());
  await expect(agent.start()).rejects.toThrow(/refused the join token/);
}, 30_000);

it("keeps a revocation in force on a server restarted with the configuration written again since", async () => {
  if (revoked === undefined) throw new Error("needs the first test's revoked node");
  cluster.kill("n2");
  // `shoal nats-operator` run again: the same keys, a fresh file, which the revived server includes.
  await natsOperator();
  cluster.revive("n2");
  await cluster.waitForJetStream();
  expect(await jwtLoginAdmitted(cluster.url("n2"), revoked.jwt, revoked.key)).toBe(false);
}, 60_000);

it("keeps the revocations another orchestrator pushed when it pushes its own", async () => {
  if (revoked === undefined) throw new Error("needs the first test's revoked node");
  // The first one gone (so that this one answers the join), and its own store, which never saw edge-1: what it knows
  // of edge-1's revocation comes from the servers' resolver.
  await orchestrator.stop();
  const other = await startOrchestrator(
    orchestratorConfig(cluster.url("n2"), { ...base, "Orchestrator.NATS.OperatorDir": keysDir }),
    silentLogger,
  );
  cleanups.push(() => other.stop());
  const key = newNkey("user");
  const jwt = await joinAs(cluster.url("n2"), "edge-2", key);
  await other.manager.operatorAction("reject", "edge-2", alice);
  for (const server of SERVERS) {
    await waitFor(async () => !(await jwtLoginAdmitted(cluster.url(server), jwt, key)), 10_000);
    expect(await jwtLoginAdmitted(cluster.url(server), revoked.jwt, revoked.key)).toBe(false);
  }
}, 60_000);

it("keeps a leaf login one orchestrator revoked when another, started before it, then rejects a node", async () => {
  // Both read the servers' account JWT at start; the leaf login's revocation is no event the other one follows.
  const first = await pushingGate(cluster.url("n1"));
  await leafThenNode(first, await pushingGate(cluster.url("n2")), "edge-4");
}, 60_000);

it("has the servers apply a revocation from an orchestrator whose clock is behind the last one to push", async () => {
  const behind = await pushingGate(cluster.url("n3"), () => Date.now() - 3_600_000);
  // Pushed after the one behind started: the servers hold a JWT issued later than anything its clock says.
  await leafThenNode(await pushingGate(cluster.url("n1"), () => Date.now() + 60_000), behind, "edge-5");
}, 60_000);

it("refuses to start with a join token whose account the servers do not know, saying what to do", async () => {
  const config = orchestratorConfig(cluster.url("n1"), {
    ...base,
    "Orchestrator.Auth.Token": "shoal-join_not-the-one",
    "Orchestrator.NATS.OperatorDir": keysDir,
  });
  await expect(startOrchestrator(config, silentLogger)).rejects.toThrow(/do not know this join token's account/);
}, 30_000);

it("tells servers that do not know an account from servers that answer nothing", async () => {
  const { system, operator } = await pushingGate(cluster.url("n1"));
  const unknown = new NatsOperator(loadOperatorKeys(keysDir), {
    joinToken: "shoal-join_not-the-one",
    jetStreamDiskBytes: 0,
  });
  expect(await lookupAccountJwt(system, unknown, 500)).toBeUndefined();
  for (const server of SERVERS) cluster.signal(server, "SIGSTOP");
  try {
    await expect(lookupAccountJwt(system, operator, 500)).rejects.toBeInstanceOf(AccountLookupUnanswered);
  } finally {
    for (const server of SERVERS) cluster.signal(server, "SIGCONT");
  }
  expect(await lookupAccountJwt(system, operator)).toEqual(expect.any(String));
}, 30_000);

it("writes the servers' configuration where --conf-out says, never among the keys", async () => {
  const out = join(tempDir(), "operator.conf");
  await natsOperator("--conf-out", out);
  expect(readFileSync(out, "utf8")).toContain("resolver_preload");
  expect(readdirSync(keysDir).filter((file) => !file.endsWith(".nk"))).toEqual([]);
});

it("gives the account room for Replicas copies in cluster mode; short of it, says which limit stopped it", async () => {
  const standIn = await KurrentStandIn.start();
  cleanups.push(() => standIn.close());
  const maxStore = base["Orchestrator.NATS.JetStreamMaxStore"];
  const clustered = orchestratorConfig(cluster.url("n1"), {
    ...base,
    "EventStore.URL": standIn.url,
    "Orchestrator.Cluster.Enabled": true,
    "Orchestrator.Cluster.Replicas": 3,
    "Orchestrator.NATS.OperatorDir": keysDir,
  });
  const { system, operator } = await pushingGate(cluster.url("n1"));
  const heldDisk = async () => jetStreamDiskOf((await lookupAccountJwt(system, operator))!);
  // As `shoal nats-operator` signed it without cluster mode: JetStreamMaxStore once, short of three copies.
  expect(await heldDisk()).toBe(maxStore);
  // An administrator of the account (the orchestrators' login may not delete streams).
  const key = newNkey("user");
  const everything = { publish: { allow: [">"] }, subscribe: { allow: [">"] } };
  const admin = await connect({
    servers: cluster.url("n1"),
    authenticator: jwtLogin(operator.issueUser(key.publicKey, "admin", everything), key),
  });
  cleanups.push(() => admin.close());
  const jsm = await admin.jetstreamManager({ timeout: 20_000 });
  // The earlier orchestrators made it with one copy; a cluster-mode start makes it anew with three.
  await jsm.streams.delete(EVENTS_STREAM);

  let started = await startOrchestrator(clustered, silentLogger);
  expect(await heldDisk()).toBe(3 * maxStore);
  expect((await jsm.streams.info(EVENTS_STREAM)).config.num_replicas).toBe(3);
  expect((await jsm.streams.info(`KV_${LEASE_BUCKET}`)).config.num_replicas).toBe(3);
  await started.stop();

  // A stream of the operator's own reserving room in the account: SHOAL_EVENTS no longer fits beside it.
  await jsm.streams.delete(EVENTS_STREAM);
  await jsm.streams.add({ name: "OPERATORS_OWN", subjects: ["own.>"], max_bytes: maxStore, num_replicas: 1 });
  const refused = startOrchestrator(clustered, silentLogger);
  await expect(refused).rejects.toMatchObject({ name: "StartupError" });
  await expect(refused).rejects.toThrow(
    new RegExp(
      `the account's JetStream disk limit is ${3 * maxStore} bytes, .* on each of its 3 copies ` +
        `\\(${3 * Math.floor(maxStore * 0.9)} bytes\\), besides ${maxStore} bytes its other streams reserve`,
    ),
  );
  await jsm.streams.delete("OPERATORS_OWN");
  started = await startOrchestrator(clustered, silentLogger);
  await started.stop();

  // More copies than the cluster has servers: a lease bucket made anew cannot be placed.
  await jsm.streams.delete(`KV_${LEASE_BUCKET}`);
  const five = startOrchestrator({ ...clustered, "Orchestrator.Cluster.Replicas": 5 }, silentLogger);
  await expect(five).rejects.toMatchObject({ name: "StartupError" });
  await expect(five).rejects.toThrow(/cannot place the 5 copies of the lease bucket SHOAL_LEASES, each on its own/);
}, 90_000);

/**
 * What an orchestrator on an external NATS with Shoal as its operator pushes revocations with (src/orchestrator/
 * services.ts), its clock `now`: the operator's keys, the servers' account JWT read at start, the gate.
 */
async function pushingGate(url: string, now?: () => number) {
  const operator = new NatsOperator(loadOperatorKeys(keysDir), {
    joinToken: TOKEN,
    jetStreamDiskBytes: base["Orchestrator.NATS.JetStreamMaxStore"],
    ...(now === undefined ? {} : { now }),
  });
  const system = await connect({
    servers: url,
    authenticator: operator.systemLogin(),
    inboxPrefix: SYSTEM_INBOX_PREFIX,
  });
  cleanups.push(() => system.close());
  operator.keepRevocationsIn((await lookupAccountJwt(system, operator))!);
  const gate = new NatsJwtGate(operator, { writeConfig: () => undefined, system, sharedResolver: true }, silentLogger);
  return { operator, system, gate };
}

type Pusher = Awaited<ReturnType<typeof pushingGate>>;

/**
 * `leaf` revokes a leaf login, then `node` admits a fresh key as `nodeId` (logging in on every server) and rejects it:
 * every server refuses the node's login, and the account JWT that revoked it (on every server then) revokes the leaf
 * login too.
 */
async function leafThenNode(leaf: Pusher, node: Pusher, nodeId: string): Promise<void> {
  const leafKey = newNkey("user").publicKey;
  await leaf.gate.revokeLeafLogins([leafKey]);
  const key = newNkey("user");
  await node.gate.apply(nodeId, key.publicKey);
  const jwt = node.gate.userJwtFor(nodeId, key.publicKey)!;
  for (const server of SERVERS) expect(await jwtLoginAdmitted(cluster.url(server), jwt, key)).toBe(true);
  await node.gate.apply(nodeId, undefined);
  for (const server of SERVERS)
    await waitFor(async () => !(await jwtLoginAdmitted(cluster.url(server), jwt, key)), 10_000);
  const held = decodeJwt((await lookupAccountJwt(node.system, node.operator))!);
  expect(Object.keys(held.nats.revocations ?? {})).toContain(leafKey);
}

/** `shoal nats-operator --dir <keysDir>` with the orchestrators' join token and JetStream budget, as an admin would. */
async function natsOperator(...more: string[]): Promise<void> {
  const settings = Object.entries(base).flatMap(([key, value]) => ["-c", `${key}=${value}`]);
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  try {
    expect(await natsOperatorCommand(["--dir", keysDir, "-c", `DataDir=${tempDir()}`, ...settings, ...more])).toBe(0);
  } finally {
    log.mockRestore();
  }
}

/** Joins as `nodeId` with `key` through the join login on `url`, as an agent does; the node's own JWT. */
async function joinAs(url: string, nodeId: string, key: NatsNkey): Promise<string> {
  const joining = await connect({ servers: url, authenticator: joinLogin(TOKEN), inboxPrefix: JOIN_INBOX_PREFIX });
  try {
    const reply = await new ComputeClient(joining, nodeId).join(computeInfo(nodeId), key, TOKEN);
    expect(reply).toMatchObject({ Accepted: true, UserJWT: expect.any(String) });
    return reply.UserJWT!;
  } finally {
    await joining.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
