import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { currentNatsOperator } from "../../src/orchestrator/nats-credentials.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { writeLeafServerConfig, type LeafServerFiles } from "../../src/transport/nats-jwt/leaf-server-config.ts";
import { hubLeafConnections } from "../../src/transport/nats-jwt/hub-leaf-connections.ts";
import { decodeJwt } from "../../src/transport/nats-jwt/nats-jwt.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { runShoal, waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * Leaf servers (docs/operations.md, Leaf servers): compute nodes connect to a nats-server near
 * them, written by `shoal leaf config`, which logs in to the orchestrator's own server with two
 * restricted logins. Real orchestrator, real nats-servers, real agents.
 */
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
const leaves: EmbeddedNatsServer[] = [];
const agents: Record<string, { agent: ComputeAgent; dataDir: string }> = {};
const open: NatsConnection[] = [];

async function startLeaf(files: LeafServerFiles, port: number): Promise<EmbeddedNatsServer> {
  const leaf = await EmbeddedNatsServer.start({
    host: "127.0.0.1",
    port,
    dir: join(files.configFile, ".."),
    logger: silentLogger,
    configFile: files.configFile,
  });
  leaves.push(leaf);
  return leaf;
}

async function newLeaf(): Promise<{ files: LeafServerFiles; port: number }> {
  const port = await freePort();
  const hub = `nats-leaf://127.0.0.1:${config["Orchestrator.NATS.LeafNodes.Port"]}`;
  return {
    files: writeLeafServerConfig(currentNatsOperator(config)!, {
      hub,
      listen: `127.0.0.1:${port}`,
      dir: tempDir("shoal-leaf-"),
    }),
    port,
  };
}

const login = async (url: string, options: Partial<ConnectionOptions>): Promise<NatsConnection> => {
  const nc = await connect({ servers: url, reconnect: false, ...options });
  open.push(nc);
  return nc;
};
const nodeJwt = (id: string) => readFileSync(join(agents[id]!.dataDir, "credentials", `${id}.jwt`), "utf8").trim();
const asNode = (url: string, id: string, jwt = nodeJwt(id)) =>
  login(url, {
    authenticator: jwtLogin(jwt, loadOrCreateNodeKey(agents[id]!.dataDir, id)),
    inboxPrefix: `_INBOX_NODE.${id}`,
  });

async function nodeView(id: string): Promise<{ Membership?: string; Health?: string } | undefined> {
  const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/${id}`);
  return res.status === 200 ? ((await res.json()) as { Node: { Membership: string; Health: string } }).Node : undefined;
}

const operatorSays = (reason: string) => commandContext({ type: "operator", id: "alice" }, { reason });

beforeAll(async () => {
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-leaf-hub-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.TLS.Disable": true, // TLS is not under test here
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NATS.LeafNodes.Port": await freePort(),
    "Orchestrator.NodeManager.DisconnectTimeout": 3000,
    "Orchestrator.NodeManager.UnknownTimeout": 60_000,
  };
  orchestrator = await startOrchestrator(config, silentLogger);
});

afterAll(async () => {
  await Promise.allSettled(open.map((nc) => nc.close()));
  for (const { agent } of Object.values(agents)) await agent.stop();
  for (const leaf of leaves) await leaf.stop();
  await orchestrator?.stop();
});

describe("a leaf server", () => {
  let leaf: EmbeddedNatsServer;
  let files: LeafServerFiles;

  it("holds nodes' connections: an agent connected to it joins, is approved, heartbeats and is listed HEALTHY", async () => {
    // The first leaf as an operator makes it: `shoal leaf config` beside the orchestrator, with its DataDir.
    const port = await freePort();
    const dir = tempDir("shoal-leaf-cli-");
    const cli = [
      "leaf",
      "config",
      "--out",
      dir,
      "--listen",
      `127.0.0.1:${port}`,
      "-c",
      `DataDir=${config.DataDir}`,
      "-c",
      "Orchestrator.Host=127.0.0.1",
    ];
    expect(await runShoal(cli)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("set Orchestrator.NATS.LeafNodes.Port"),
    });
    const withPort = [...cli, "-c", `Orchestrator.NATS.LeafNodes.Port=${config["Orchestrator.NATS.LeafNodes.Port"]}`];
    // Arguments nats-server would refuse only when the leaf starts, on its own machine: refused here, nothing written.
    for (const [bad, says] of [
      [["--hub", "127.0.0.1:7422"], "--hub: expected a URL"],
      [["--hub", "nats://127.0.0.1:7422"], "--hub: the scheme must be"],
      [["--hub", "nats-leaf://127.0.0.1:99999"], "--hub: expected a URL"],
      [["--listen", "127.0.0.1:99999"], "--listen: expected HOST:PORT"],
      [["--name", "two words"], "--name: a server name without spaces"],
    ] as const) {
      expect(await runShoal([...withPort, ...bad])).toMatchObject({ code: 2, stderr: expect.stringContaining(says) });
    }
    expect(existsSync(join(dir, "leaf.conf"))).toBe(false);
    // Another join token than the orchestrator's would make another account, which the hub refuses: said, nothing
    // written.
    expect(await runShoal([...withPort, "-c", "Orchestrator.Auth.Token=not-the-orchestrators"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("the join token differs"),
    });
    // It reads the orchestrator's credentials and makes none: a DataDir with the server's config but no keys is refused
    // as it is.
    const bare = tempDir("shoal-leaf-bare-");
    mkdirSync(join(bare, "nats"));
    copyFileSync(join(config.DataDir, "nats", "nats-server.conf"), join(bare, "nats", "nats-server.conf"));
    const noKeys = withPort.map((arg) => (arg === `DataDir=${config.DataDir}` ? `DataDir=${bare}` : arg));
    expect(await runShoal(noKeys)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("are read, never made here"),
    });
    expect(existsSync(join(bare, "credentials"))).toBe(false);
    expect(existsSync(join(dir, "leaf.conf"))).toBe(false);
    const written = await runShoal(withPort);
    expect(written).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`Hub: nats-leaf://127.0.0.1:${config["Orchestrator.NATS.LeafNodes.Port"]}`),
    });
    files = {
      configFile: join(dir, "leaf.conf"),
      shoalCreds: join(dir, "leaf-shoal.creds"),
      systemCreds: join(dir, "leaf-system.creds"),
      leafConfigFile: join(dir, "leaf.conf"),
    };
    for (const file of Object.values(files)) expect(statSync(file).mode & 0o777).toBe(0o600);
    leaf = await startLeaf(files, port);
    for (const id of ["leaf-a", "leaf-b"]) {
      const dataDir = tempDir(`shoal-${id}-`);
      const agent = testAgent({
        nodeId: id,
        orchestrators: [leaf.url],
        token: orchestrator.joinToken.token,
        dataDir,
        heartbeatMs: 300,
      });
      agents[id] = { agent, dataDir };
      // The leaf's remotes connect asynchronously; the agent retries its join meanwhile.
      await agent.start();
    }
    await waitFor(
      async () => (await nodeView("leaf-a"))?.Health === "HEALTHY",
      10_000,
      () => "leaf-a listed HEALTHY",
    );
    expect(await nodeView("leaf-a")).toMatchObject({ Membership: "APPROVED", Health: "HEALTHY" });
    const since = orchestrator.manager.live("leaf-b")!.lastHeartbeat!;
    await waitFor(
      () => (orchestrator.manager.live("leaf-b")?.lastHeartbeat ?? 0) > since,
      5_000,
      () => "leaf-b heartbeating through the leaf",
    );
  });

  it("holds each node to its own subjects at the leaf", async () => {
    const nc = await asNode(leaf.url, "leaf-a");
    await expect(
      nc.request("shoal.compute.leaf-b.heartbeat", new Uint8Array(), { timeout: 2000 }),
    ).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    await expect(
      nc.request("shoal.events.node.leaf-b.NodeDeleted", new Uint8Array(), { timeout: 2000 }),
    ).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
  });

  it("logs in to the hub only as a leaf, with only the nodes' subjects", async () => {
    // As a client on the hub the Shoal login could speak for any node: it is refused there.
    for (const creds of [files.shoalCreds, files.systemCreds]) {
      await expect(
        login(orchestrator.natsUrl, { authenticator: credsAuthenticator(readFileSync(creds)) }),
      ).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });
    }
    const claims = (creds: string) =>
      decodeJwt(/-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(readFileSync(creds, "utf8"))![1]!).nats;
    expect(claims(files.shoalCreds)).toMatchObject({
      pub: { allow: ["shoal.compute.*.*", "shoal.join.*"] },
      sub: { allow: ["_INBOX_NODE.>", "_INBOX_JOIN.>", "shoal.work.>"] },
      allowed_connection_types: ["LEAFNODE"],
    });
    expect(claims(files.systemCreds)).toMatchObject({
      pub: { allow: ["_INBOX_SHOAL_SYS.>"] },
      sub: { allow: ["$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE"] },
    });
  });

  it("drops a revoked node at the leaf, and a leaf started later from a configuration older than the revocation refuses it", async () => {
    // Written before the revocation: its preloaded account JWT does not know of it.
    const later = await newLeaf();
    const jwt = nodeJwt("leaf-b");
    const nc = await asNode(leaf.url, "leaf-b", jwt);
    const closed = nc.closed();
    await orchestrator.manager.operatorAction("reject", "leaf-b", operatorSays("not ours"));
    const why = await Promise.race([closed, new Promise((r) => setTimeout(() => r("still connected"), 5000))]);
    expect(String(why)).toMatch(/revoked/i);
    await expect(asNode(leaf.url, "leaf-b", jwt)).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });

    const preloaded = JSON.parse(readFileSync(later.files.configFile, "utf8")) as {
      resolver_preload: Record<string, string>;
    };
    const key = agents["leaf-b"]!.agent.publicKey;
    expect(
      Object.values(preloaded.resolver_preload).some((j) =>
        JSON.stringify(decodeJwt(j).nats.revocations ?? {}).includes(key),
      ),
    ).toBe(false);
    const leaf2 = await startLeaf(later.files, later.port);
    // Once its system login reaches the hub, the orchestrator hands it the current account JWT.
    await waitFor(
      () =>
        asNode(leaf2.url, "leaf-b", jwt).then(
          (c) => (void c.close(), false),
          (e: { code?: string }) => e.code === "AUTHORIZATION_VIOLATION",
        ),
      5_000,
      () => "the later leaf refusing the revoked key",
    );
    // Nodes not revoked still get in there.
    await (await asNode(leaf2.url, "leaf-a")).close();
  });

  it("shoal leaf revoke cuts a leaf off the hub for good; other leaves still connect", async () => {
    const operator = currentNatsOperator(config)!;
    const system = await login(orchestrator.natsUrl, { authenticator: operator.systemLogin() });
    const leafLogins = async () => (await hubLeafConnections(system, operator.account)).length;
    await waitFor(
      async () => (await leafLogins()) === 2,
      10_000,
      () => "both leaves' logins at the hub",
    );
    const refused: string[] = [];
    system.subscribe("$SYS.SERVER.*.CLIENT.AUTH.ERR", {
      callback: (_err, msg) =>
        refused.push(
          String((JSON.parse(new TextDecoder().decode(msg.data)) as { client?: { kind?: string } }).client?.kind),
        ),
    });
    await system.flush();
    const api = ["-c", `DataDir=${config.DataDir}`, "--api-port", new URL(orchestrator.apiUrl).port];
    // The system-account login is not what cuts a leaf off: refused, nothing revoked.
    expect(await runShoal(["leaf", "revoke", "--creds", files.systemCreds, ...api])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("system-account login"),
    });
    expect(await runShoal(["leaf", "revoke", "--key", "not-a-key", ...api])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--key: expected a NATS user public key"),
    });
    expect(await leafLogins()).toBe(2);

    const key = decodeJwt(
      /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(readFileSync(files.shoalCreds, "utf8"))![1]!,
    ).sub;
    expect(await runShoal(["leaf", "revoke", "--dir", join(files.configFile, ".."), ...api])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`Revoked ${key}`),
    });
    await waitFor(
      async () => (await leafLogins()) === 1,
      10_000,
      () => "the revoked leaf dropped by the hub",
    );
    // It tries again (every second) and is refused each time; it stays out.
    await waitFor(
      () => refused.includes("Leafnode"),
      10_000,
      () => "the hub refusing the revoked leaf's reconnection",
    );
    expect(await leafLogins()).toBe(1);
    // Kept across the hub's restarts: in the configuration the orchestrator writes.
    expect(
      JSON.stringify(
        decodeJwt(
          JSON.parse(readFileSync(join(config.DataDir, "nats", "nats-server.conf"), "utf8")).resolver_preload[
            operator.account
          ],
        ).nats.revocations,
      ),
    ).toContain(key);

    // Another leaf still connects, and so does one started later.
    const third = await newLeaf();
    await startLeaf(third.files, third.port);
    await waitFor(
      async () => (await leafLogins()) === 2,
      10_000,
      () => "a new leaf's login at the hub",
    );
  });
});
