import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { connect, credsAuthenticator, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/fs/write-file-atomic.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import {
  EVENTS_READER_PERMISSIONS,
  EVENTS_READER_USER,
  JOIN_USER,
  ORCHESTRATOR_PERMISSIONS,
  ORCHESTRATOR_USER,
  nodePermissions,
} from "../../src/transport/nats-auth/nats-roles.ts";
import { credsFileText } from "../../src/transport/nats-jwt/creds-file.ts";
import { decodeJwt, userJwt } from "../../src/transport/nats-jwt/nats-jwt.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import {
  NatsOperator,
  joinLogin,
  joinSigner,
  loadOrCreateOperatorKeys,
  shoalAccountKey,
} from "../../src/transport/nats-jwt/nats-operator.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * Client credentials are valid only as client connections (allowed_connection_types STANDARD):
 * a node's, a joiner's or a reader's credentials cannot log in to the hub as a leaf server,
 * which would let their holder carry traffic for any node. Leaf logins are LEAFNODE only. Real
 * nats-server 2.9 hub and leaves, in operator mode with Shoal's operator.
 */
const JOIN_TOKEN = "shoal-join_connection-types";
const dir = tempDir("shoal-conn-types-");
let operator: NatsOperator;
let hub: EmbeddedNatsServer;
let leafPort: number;
let monitorUrl: string;
const leaves: ChildProcess[] = [];
const open: NatsConnection[] = [];

/** A leaf nats-server whose one remote to the hub logs in with `creds`; its log, to see what the hub answered. */
async function startLeaf(name: string, creds: string): Promise<{ url: string; monitor: string; log: () => string }> {
  const leafDir = join(dir, name);
  const credsFile = join(leafDir, "remote.creds");
  writeFileAtomic(credsFile, creds, 0o600);
  const [port, monitorPort] = [await freePort(), await freePort()];
  const config = {
    server_name: name,
    listen: `127.0.0.1:${port}`,
    http: `127.0.0.1:${monitorPort}`,
    ...operator.serverConfig(),
    leafnodes: {
      reconnect: 1,
      remotes: [{ url: `nats-leaf://127.0.0.1:${leafPort}`, credentials: credsFile, account: operator.account }],
    },
  };
  const configFile = join(leafDir, "leaf.conf");
  writeFileAtomic(configFile, JSON.stringify(config), 0o600);
  const child = spawn("/usr/sbin/nats-server", ["-c", configFile], { stdio: ["ignore", "ignore", "pipe"] });
  leaves.push(child);
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  await waitFor(
    () => log.includes("Server is ready"),
    10_000,
    () => `leaf ${name} ready: ${log}`,
  );
  return { url: `nats://127.0.0.1:${port}`, monitor: `http://127.0.0.1:${monitorPort}`, log: () => log };
}

/** How many leaf connections `monitor`'s server holds (nats-server's /leafz; 2.9 names no leaf there). */
async function leafConnections(monitor: string): Promise<number> {
  return ((await (await fetch(`${monitor}/leafz`)).json()) as { leafnodes: number }).leafnodes;
}

const login = async (url: string, options: Parameters<typeof connect>[0]): Promise<NatsConnection> => {
  const nc = await connect({ servers: url, reconnect: false, ...options });
  open.push(nc);
  return nc;
};

function clientCreds(): Record<string, () => string> {
  return {
    node: () => {
      const key = newNkey("user");
      return credsFileText(operator.issueUser(key.publicKey, "edge-1", nodePermissions("edge-1")), key.seed);
    },
    "event reader": () => {
      const key = newNkey("user");
      return credsFileText(operator.issueUser(key.publicKey, EVENTS_READER_USER, EVENTS_READER_PERMISSIONS), key.seed);
    },
    orchestrator: () => {
      const key = newNkey("user");
      return credsFileText(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key.seed);
    },
  };
}

beforeAll(async () => {
  operator = new NatsOperator(loadOrCreateOperatorKeys(join(dir, "credentials")), {
    joinToken: JOIN_TOKEN,
    jetStreamDiskBytes: 64 * 1024 * 1024,
  });
  const [port, monitorPort] = [await freePort(), await freePort()];
  leafPort = await freePort();
  monitorUrl = `http://127.0.0.1:${monitorPort}`;
  const configFile = join(dir, "hub.conf");
  const config = {
    server_name: "hub",
    listen: `127.0.0.1:${port}`,
    http: `127.0.0.1:${monitorPort}`,
    pid_file: join(dir, "hub.pid"),
    ...operator.serverConfig(),
    leafnodes: { listen: `127.0.0.1:${leafPort}` },
  };
  writeFileAtomic(configFile, JSON.stringify(config), 0o600);
  hub = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
});

afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => undefined);
  for (const child of leaves) child.kill("SIGKILL");
  await hub?.stop();
});

describe("connection types", () => {
  let leafUrl: string;

  it("a leaf server's own login connects to the hub as a leafnode", async () => {
    const key = newNkey("user");
    const leaf = await startLeaf(
      "proper-leaf",
      credsFileText(operator.leafLogins(key.publicKey, newNkey("user").publicKey).shoal, key.seed),
    );
    leafUrl = leaf.url;
    await waitFor(
      async () => (await leafConnections(leaf.monitor)) === 1,
      10_000,
      () => `proper-leaf connected to the hub: ${leaf.log()}`,
    );
    expect(await leafConnections(monitorUrl)).toBe(1);
  });

  it.each(Object.keys(clientCreds()))("a %s's credentials are refused as a leafnode login", async (who) => {
    const name = `as-${who.replaceAll(" ", "-")}`;
    const leaf = await startLeaf(name, clientCreds()[who]!());
    await waitFor(
      () => /authorization violation/i.test(leaf.log()),
      10_000,
      () => `the hub refusing ${name}: ${leaf.log()}`,
    );
    expect(await leafConnections(leaf.monitor)).toBe(0);
    // Only proper-leaf's connection.
    expect(await leafConnections(monitorUrl)).toBe(1);
  });

  it("carries STANDARD in each client JWT it issues, LEAFNODE in each leaf login's", () => {
    const claims = (creds: string) => decodeJwt(/-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(creds)![1]!).nats;
    for (const who of Object.keys(clientCreds()))
      expect(claims(clientCreds()[who]!())).toMatchObject({ allowed_connection_types: ["STANDARD"] });
    const leaf = operator.leafLogins(newNkey("user").publicKey, newNkey("user").publicKey);
    for (const jwt of [leaf.shoal, leaf.system])
      expect(decodeJwt(jwt).nats).toMatchObject({ allowed_connection_types: ["LEAFNODE"] });
  });

  /**
   * nats-server 2.9 checks connection types from the user's own JWT, before a scope replaces its
   * permissions, and refuses a scoped user's JWT that claims anything itself: the join login
   * cannot be held to STANDARD. What a token holder gets as a leaf is the join scope, as a client.
   */
  it("lets a join-token holder log in as a leafnode only with the join permissions: a node's heartbeat through it never reaches the hub", async () => {
    const key = newNkey("user");
    const claimingLeaf = userJwt(joinSigner(JOIN_TOKEN), key.publicKey, JOIN_USER, undefined, {
      issuerAccount: shoalAccountKey(JOIN_TOKEN).publicKey,
      scoped: true,
      connectionTypes: ["LEAFNODE"],
    });
    const refused = await startLeaf("join-claiming-leafnode", credsFileText(claimingLeaf, key.seed));
    await waitFor(
      () => /authorization violation/i.test(refused.log()),
      10_000,
      () => `the hub refusing a scoped JWT that claims a connection type: ${refused.log()}`,
    );

    const joinKey = newNkey("user");
    const joinJwt = userJwt(joinSigner(JOIN_TOKEN), joinKey.publicKey, JOIN_USER, undefined, {
      issuerAccount: shoalAccountKey(JOIN_TOKEN).publicKey,
      scoped: true,
    });
    const leaf = await startLeaf("join-as-leaf", credsFileText(joinJwt, joinKey.seed));
    await waitFor(
      async () => (await leafConnections(leaf.monitor)) === 1,
      10_000,
      () => `join-as-leaf connected: ${leaf.log()}`,
    );

    const orchestratorKey = newNkey("user");
    const hubSide = await login(hub.url, {
      authenticator: credsAuthenticator(
        new TextEncoder().encode(
          credsFileText(
            operator.issueUser(orchestratorKey.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS),
            orchestratorKey.seed,
          ),
        ),
      ),
    });
    const seen: string[] = [];
    hubSide.subscribe("shoal.>", {
      callback: (_, msg) => seen.push(`${msg.subject} ${new TextDecoder().decode(msg.data)}`),
    });
    await hubSide.flush();
    const nodeKey = newNkey("user");
    const node = await login(leaf.url, {
      authenticator: credsAuthenticator(
        new TextEncoder().encode(
          credsFileText(operator.issueUser(nodeKey.publicKey, "edge-7", nodePermissions("edge-7")), nodeKey.seed),
        ),
      ),
    });
    // The hub's interest reaches the leaf asynchronously: a join request (what the scope allows) until one arrives.
    await waitFor(
      async () => {
        node.publish("shoal.join.edge-7");
        await node.flush();
        await new Promise((r) => setTimeout(r, 50));
        return seen.includes("shoal.join.edge-7 ");
      },
      10_000,
      () => `a join request through join-as-leaf: ${leaf.log()}`,
    );
    node.publish("shoal.compute.edge-7.heartbeat");
    node.publish("shoal.join.edge-7", new TextEncoder().encode("after"));
    await node.flush();
    // Published after the heartbeat on the same path: once it is in, the heartbeat would have been.
    await waitFor(
      () => seen.includes("shoal.join.edge-7 after"),
      10_000,
      () => "the join request after the heartbeat",
    );
    expect(seen).not.toContain("shoal.compute.edge-7.heartbeat ");
  });

  it("still admits each as a client, at the hub and at a leaf (which checks the connection type itself)", async () => {
    for (const url of [hub.url, leafUrl]) {
      for (const who of ["node", "event reader", "orchestrator"]) {
        const nc = await login(url, {
          authenticator: credsAuthenticator(new TextEncoder().encode(clientCreds()[who]!())),
        });
        await nc.flush();
      }
      const joining = await login(url, { authenticator: joinLogin(JOIN_TOKEN), inboxPrefix: "_INBOX_JOIN" });
      await joining.flush();
    }
    // The account-update login, at the hub only (a leaf's system account is reached through its remote).
    await (await login(hub.url, { authenticator: operator.systemLogin() })).flush();
  });
});
