import { readFileSync, writeFileSync } from "node:fs";
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/fs/write-file-atomic.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { HUB_ANSWER_PREFIX, nodePermissions } from "../../src/transport/nats-auth/nats-roles.ts";
import { operatorModeServerConfig } from "../../src/transport/nats-auth/nats-server-config.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { hubLeafConnections } from "../../src/transport/nats-jwt/hub-leaf-connections.ts";
import { LeafAccountSync } from "../../src/transport/nats-jwt/leaf-account-sync.ts";
import { writeLeafServerConfig, type LeafServerFiles } from "../../src/transport/nats-jwt/leaf-server-config.ts";
import { NatsJwtGate } from "../../src/transport/nats-jwt/nats-jwt-gate.ts";
import { newNkey, type NatsNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys } from "../../src/transport/nats-jwt/nats-operator.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { jwtLoginAdmitted } from "../support/jwt-login-admitted.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * LeafAccountSync (docs/operations.md, Leaf servers, Revocation) against a real hub and real leaf
 * nats-servers: it goes by what the hub reports, runs beside the gate's push queue, and hands a
 * leaf the JWT again once the leaf can apply it.
 */
type Cleanup = () => Promise<unknown> | unknown;
const hubCleanups: Cleanup[] = [];
/** Each test's leaves and syncs: gone before the next test looks at the hub's leaf connections. */
const cleanups: Cleanup[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  for (const c of hubCleanups.reverse()) await c();
});

let operator: NatsOperator;
let gate: NatsJwtGate;
let system: NatsConnection;
let leafPort: number;
let hubPort: number;

beforeAll(async () => {
  const dir = tempDir("shoal-leaf-sync-hub-");
  const port = (hubPort = await freePort());
  leafPort = await freePort();
  operator = new NatsOperator(loadOrCreateOperatorKeys(join(dir, "credentials")), {
    joinToken: "join-me",
    jetStreamDiskBytes: 64 * 1024 * 1024,
  });
  const settings = {
    host: "127.0.0.1",
    port,
    serverName: "hub",
    leafNodePort: leafPort,
    ...embeddedNatsPaths(dir),
    maxFileStoreBytes: 64 * 1024 * 1024,
  };
  const file = join(dir, "nats-server.conf");
  const target: { writeConfig: () => void; system: NatsConnection | undefined } = {
    writeConfig: () => writeFileAtomic(file, operatorModeServerConfig(settings, operator.serverConfig()), 0o600),
    system: undefined,
  };
  target.writeConfig();
  const hub = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile: file });
  hubCleanups.push(() => hub.stop());
  system = await connect({ servers: hub.url, authenticator: operator.systemLogin() });
  hubCleanups.push(() => system.close());
  target.system = system;
  gate = new NatsJwtGate(operator, target, silentLogger);
});

/** A leaf configuration as `shoal leaf config` writes it, with `edit` applied to its remotes. */
function leafConfig(
  edit: (remotes: Record<string, unknown>[]) => void = () => undefined,
  hub = `nats-leaf://127.0.0.1:${leafPort}`,
): Promise<{ files: LeafServerFiles; port: number }> {
  return freePort().then((port) => {
    const files = writeLeafServerConfig(operator, {
      hub,
      listen: `127.0.0.1:${port}`,
      dir: tempDir("shoal-leaf-sync-leaf-"),
    });
    const config = JSON.parse(readFileSync(files.configFile, "utf8")) as {
      leafnodes: { remotes: Record<string, unknown>[] };
    };
    edit(config.leafnodes.remotes);
    writeFileSync(files.configFile, JSON.stringify(config));
    return { files, port };
  });
}

async function startLeaf({ files, port }: { files: LeafServerFiles; port: number }): Promise<EmbeddedNatsServer> {
  const leaf = await EmbeddedNatsServer.start({
    host: "127.0.0.1",
    port,
    dir: join(files.configFile, ".."),
    logger: silentLogger,
    configFile: files.configFile,
  });
  cleanups.push(() => leaf.stop());
  return leaf;
}

/** A broken leaf: its system login connects but never asks the hub for account updates. */
const mute = (remotes: Record<string, unknown>[]) =>
  Object.assign(remotes[1]!, { deny_imports: ["$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE"] });

function newSync(giveUpMs: number): LeafAccountSync {
  const sync = new LeafAccountSync(system, operator, silentLogger, { giveUpMs });
  cleanups.push(sync.start());
  return sync;
}

/** A node key with a JWT issued now, and whether `url` admits it. */
function nodeLogin(id: string): { key: NatsNkey; jwt: string } {
  const key = newNkey("user");
  return { key, jwt: operator.issueUser(key.publicKey, id, nodePermissions(id)) };
}
const admits = (url: string, { key, jwt }: { key: NatsNkey; jwt: string }): Promise<boolean> =>
  jwtLoginAdmitted(url, jwt, key);

it("a leaf that never takes account updates holds up no join or revocation, and is given up on after giveUpMs", async () => {
  const sync = newSync(8_000);
  for (let i = 0; i < 3; i++) await startLeaf(await leafConfig(mute));
  await waitFor(
    () => sync.state().waiting.length === 3,
    10_000,
    () => `three mute leaves waited for: ${JSON.stringify(sync.state())}`,
  );

  // Ten joins and revocations go to the hub and back while those leaves are still waited for
  // (each waited for up to 8 s: with the queue, every unanswered attempt held it for 1 s).
  for (let i = 0; i < 10; i++) {
    const node = newNkey("user");
    await gate.apply(`node-${i}`, node.publicKey);
    await gate.apply(`node-${i}`, undefined);
    expect(operator.revocations.has(node.publicKey)).toBe(true);
  }
  expect(sync.state().waiting).toHaveLength(3);
  expect(sync.state().gaveUp).toEqual([]);

  await sync.sync();
  expect(sync.state()).toMatchObject({ synced: [], waiting: [] });
  expect(sync.state().gaveUp).toHaveLength(3);
});

it("a leaf whose nodes' account loads after its system login was handed the JWT is handed it again, and then refuses a key revoked before it started", async () => {
  const sync = newSync(30_000);
  const revoked = nodeLogin("node-r");
  const live = nodeLogin("node-l");
  // Written before the revocation: its preloaded account JWT admits the key.
  const relay = new HeldRelay(await freePort());
  cleanups.push(() => relay.close());
  const config = await leafConfig((remotes) =>
    Object.assign(remotes[0]!, { url: `nats-leaf://127.0.0.1:${relay.port}` }),
  );
  await gate.apply("node-r", revoked.key.publicKey);
  await gate.apply("node-r", undefined);
  await gate.apply("node-l", live.key.publicKey);

  // The system login reaches the hub and is handed the JWT while the leaf has not loaded the
  // Shoal account (its remote cannot reach the hub yet): the leaf skips the update.
  const leaf = await startLeaf(config);
  await waitFor(
    () => sync.state().synced.length === 1,
    10_000,
    () => `the leaf's system login handed the JWT: ${JSON.stringify(sync.state())}`,
  );

  // Its Shoal-account remote connects: the leaf loads the account from its stale configuration,
  // and is handed the current JWT again.
  await relay.open(leafPort);
  await waitFor(
    () => admits(leaf.url, revoked).then((yes) => !yes),
    10_000,
    () => "the leaf refusing the key revoked before it started",
  );
  expect(await admits(leaf.url, live)).toBe(true);
});

it("goes by the hub's report, not by answers: a leaf forging another's confirmation does not make it synced", async () => {
  const sync = newSync(30_000);
  const revoked = nodeLogin("node-f");
  const victimConfig = await leafConfig(mute);
  await gate.apply("node-f", revoked.key.publicKey);
  await gate.apply("node-f", undefined);
  const victim = await startLeaf(victimConfig);
  const victimId = await serverId(victim.url);

  // Someone holding a leaf's system login, on a nats-server of their own, answers every account
  // update as if the victim had applied it.
  const forger = await startForger(victimId);
  await waitFor(
    () => sync.state().synced.length === 1 && sync.state().waiting.length === 1,
    10_000,
    () => `the forger synced, the victim waited for: ${JSON.stringify(sync.state())}`,
  );
  // Pushes carry a reply subject (for the hub's answer): the forger answers them as the victim,
  // but the hub lets no leaf publish into the orchestrator's answer space.
  const forged: string[] = [];
  system.subscribe(`${HUB_ANSWER_PREFIX}.>`, {
    callback: (_err, msg) => void (new TextDecoder().decode(msg.data).includes(victimId) && forged.push(msg.subject)),
  });
  await gate.republish();
  await waitFor(
    () => forger.answered > 0,
    10_000,
    () => "the forger answering account updates",
  );
  await gate.republish();
  await system.flush();
  expect(forged).toEqual([]);
  expect(sync.state().waiting).toHaveLength(1);
  expect(sync.state().synced).toHaveLength(1);
  // The victim never had it: it still admits the revoked key.
  expect(await admits(victim.url, revoked)).toBe(true);
});

it("hands the JWT to a leaf that connected while the orchestrator's system login was away, once that login is back", async () => {
  // The orchestrator's system login, through a relay the test can cut.
  const relay = new HeldRelay(await freePort());
  cleanups.push(() => relay.close());
  await relay.open(hubPort);
  const away = await connect({
    servers: `nats://127.0.0.1:${relay.port}`,
    authenticator: operator.systemLogin(),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  cleanups.push(() => away.close());
  const sync = new LeafAccountSync(away, operator, silentLogger, { giveUpMs: 30_000 });
  let disconnected = false;
  void (async () => {
    for await (const status of away.status()) if (status.type === "disconnect") disconnected = true;
  })();
  cleanups.push(sync.start());
  const revoked = nodeLogin("node-o");
  const config = await leafConfig();
  await gate.apply("node-o", revoked.key.publicKey);
  await gate.apply("node-o", undefined);

  await sync.sync(); // the round its start began is over: nothing is waited for
  await relay.close();
  await waitFor(
    () => disconnected,
    10_000,
    () => "the system login noticing it is cut off",
  );
  const leaf = await startLeaf(config);
  // Both its logins are at the hub and its nodes' account is loaded; the advisory reached nobody.
  await waitFor(
    async () =>
      (await hubLeafConnections(system, operator.systemAccount)).length === 1 &&
      (await hubLeafConnections(system, operator.account)).length === 1,
    10_000,
    () => "the leaf's two logins at the hub",
  );
  expect(await admits(leaf.url, revoked)).toBe(true);

  await relay.open(hubPort);
  await waitFor(
    () => admits(leaf.url, revoked).then((yes) => !yes),
    10_000,
    () => "the leaf refusing the revoked key once the system login is back",
  );
});

/** The id of the server at `url` (its INFO), by logging in as a node. */
async function serverId(url: string): Promise<string> {
  const login = nodeLogin("node-probe");
  await gate.apply("node-probe", login.key.publicKey);
  const nc = await connect({ servers: url, authenticator: jwtLogin(login.jwt, login.key), reconnect: false });
  const id = nc.info!.server_id;
  await nc.close();
  return id;
}

/**
 * A nats-server (no operator) bound to the hub with a leaf's system login, and a client on it answering for `victim`.
 */
async function startForger(victim: string): Promise<{ answered: number }> {
  const port = await freePort();
  const dir = tempDir("shoal-leaf-sync-forger-");
  const files = writeLeafServerConfig(operator, {
    hub: `nats-leaf://127.0.0.1:${leafPort}`,
    listen: `127.0.0.1:${port}`,
    dir,
  });
  const config = {
    listen: `127.0.0.1:${port}`,
    pid_file: join(dir, "nats-server.pid"),
    accounts: { X: { users: [{ user: "forger", password: "forger" }] } },
    leafnodes: {
      remotes: [{ url: `nats-leaf://127.0.0.1:${leafPort}`, credentials: files.systemCreds, account: "X" }],
    },
  };
  writeFileSync(files.configFile, JSON.stringify(config));
  await startLeaf({ files, port });
  const nc = await connect({ servers: `nats://127.0.0.1:${port}`, user: "forger", pass: "forger" });
  cleanups.push(() => nc.close());
  const state = { answered: 0 };
  nc.subscribe("$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", {
    callback: (_err, msg) => {
      if (!msg.reply) return;
      state.answered++;
      nc.publish(
        msg.reply,
        new TextEncoder().encode(
          JSON.stringify({ server: { id: victim }, data: { code: 200, message: "jwt updated" } }),
        ),
      );
    },
  });
  await nc.flush();
  return state;
}

/**
 * A TCP relay to the hub's leaf port on a port where nothing listens until it is opened (a
 * leaf's remote that cannot reach the hub does not even look up its account).
 */
class HeldRelay {
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  constructor(readonly port: number) {}
  open(target: number): Promise<void> {
    this.server = createServer((socket) => {
      const upstream = tcpConnect(target, "127.0.0.1");
      for (const s of [socket, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => (socket.destroy(), upstream.destroy()));
      }
      socket.pipe(upstream).pipe(socket);
    });
    return new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
  }
  /** Cuts every connection through it and listens no more. */
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
