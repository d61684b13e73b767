/**
 * Spike (round 3; the wiring came in round 5: Orchestrator.NATS.LeafNodes.Port, `shoal leaf
 * config`, test/integration/leaf-server.test.ts, and bench/fleet-leaves.ts for the memory figures
 * with a real orchestrator): can nats-server 2.9 leafnodes hold the nodes' connections in the
 * operator/JWT mode Shoal uses (docs/security.md, NATS)? Two nats-servers with Shoal's operator
 * configuration (`NatsOperator.serverConfig()`): a hub (the orchestrator's server) that accepts
 * leafnode connections, and a leaf that connects to it with a user of the Shoal account (and one of
 * the system account, so account updates reach it). Checks, in order:
 *
 *  1. the join login (a JWT signed by the join token's scoped signer) and a node's own JWT log in
 *     at the leaf, which verifies them itself (the hub never sees those logins);
 *  2. a join request sent at the leaf is answered by a subscriber on the hub, a node's heartbeat
 *     reaches the hub;
 *  3. the leaf enforces each user's permissions: the join login cannot publish heartbeats, a node
 *     cannot speak as another node;
 *  4. a revocation pushed to the hub through its system account reaches the leaf: the revoked
 *     node's connection at the leaf is closed and its JWT refused from then on;
 *  5. memory and CPU: N node logins at the leaf (held), the leaf's and the hub's RSS and CPU.
 *
 * Run: npx tsx bench/fleet-leafnode.ts [nodes=2000]
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type NatsConnection } from "nats";
import pino from "pino";
import { writeFileAtomic } from "../src/fs/write-file-atomic.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../src/transport/embedded-nats-server.ts";
import { ORCHESTRATOR_PERMISSIONS, ORCHESTRATOR_USER, nodePermissions } from "../src/transport/nats-auth/nats-roles.ts";
import { credsFileText } from "../src/transport/nats-jwt/creds-file.ts";
import { jwtLogin } from "../src/transport/nats-jwt/jwt-login.ts";
import { userJwt } from "../src/transport/nats-jwt/nats-jwt.ts";
import { newNkey } from "../src/transport/nats-jwt/nats-nkey.ts";
import {
  NatsOperator,
  joinLogin,
  loadOrCreateOperatorKeys,
  pushAccountJwt,
} from "../src/transport/nats-jwt/nats-operator.ts";
import { JOIN_INBOX_PREFIX, nodeInboxPrefix } from "../src/transport/subjects.ts";
import { freePort } from "./support/free-port.ts";
import { processCpuMs } from "./support/process-cpu.ts";
import { rssMB } from "./support/process-rss.ts";

async function main(): Promise<void> {
  const nodes = Number(process.argv[2] ?? "2000");
  const logger = pino({ level: "silent" });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const text = new TextEncoder();
  const root = mkdtempSync(join(tmpdir(), "shoal-leaf-spike-"));
  const token = "leaf-spike-join-token";
  const keys = loadOrCreateOperatorKeys(join(root, "credentials"));
  const operator = new NatsOperator(keys, { joinToken: token, jetStreamDiskBytes: 256 * 1024 ** 2 });
  const results: Record<string, string | number | boolean> = {};

  async function server(name: string, port: number, extra: Record<string, unknown>): Promise<EmbeddedNatsServer> {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    const configFile = join(dir, "nats-server.conf");
    writeFileAtomic(
      configFile,
      JSON.stringify({
        listen: `127.0.0.1:${port}`,
        pid_file: embeddedNatsPaths(dir).pidFile,
        ...operator.serverConfig(),
        ...extra,
      }),
      0o600,
    );
    return EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger, configFile });
  }

  function credsFile(name: string, jwt: string, seed: string): string {
    const file = join(root, `${name}.creds`);
    writeFileAtomic(file, credsFileText(jwt, seed), 0o600);
    return file;
  }

  /** Whether `nc` gets a permissions violation for publishing `subject` (reported asynchronously). */
  async function refusedToPublish(nc: NatsConnection, subject: string): Promise<boolean> {
    let refused = false;
    const watching = (async () => {
      for await (const s of nc.status())
        if (s.type === "error" && /permissions[ _]violation/i.test(String(s.data))) refused = true;
    })();
    nc.publish(subject, text.encode("x"));
    await nc.flush().catch(() => undefined);
    await sleep(300);
    void watching;
    return refused;
  }

  const hubPort = await freePort();
  const hubLeafPort = await freePort();
  const leafPort = await freePort();
  const hub = await server("hub", hubPort, { leafnodes: { listen: `127.0.0.1:${hubLeafPort}` } });
  const leafUser = newNkey("user");
  const leafSysUser = newNkey("user");
  const leaf = await server("leaf", leafPort, {
    leafnodes: {
      remotes: [
        {
          url: `nats-leaf://127.0.0.1:${hubLeafPort}`,
          credentials: credsFile(
            "leaf",
            userJwt(keys.accountSigner, leafUser.publicKey, "shoal-leaf", undefined, {
              issuerAccount: operator.account,
            }),
            leafUser.seed,
          ),
          account: operator.account,
        },
        {
          url: `nats-leaf://127.0.0.1:${hubLeafPort}`,
          credentials: credsFile(
            "leaf-sys",
            userJwt(keys.systemSigner, leafSysUser.publicKey, "shoal-leaf-sys", undefined, {
              issuerAccount: keys.systemAccount.publicKey,
            }),
            leafSysUser.seed,
          ),
          account: keys.systemAccount.publicKey,
        },
      ],
    },
  });
  const open: NatsConnection[] = [];
  try {
    // The orchestrator's stand-in, on the hub.
    const orchKey = newNkey("user");
    const orch = await connect({
      servers: hub.url,
      authenticator: jwtLogin(
        operator.issueUser(orchKey.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS),
        orchKey,
      ),
    });
    open.push(orch);
    let heartbeats = 0;
    orch.subscribe("shoal.join.*", { callback: (_e, m) => m.respond(text.encode(`joined ${m.subject}`)) });
    orch.subscribe("shoal.compute.*.heartbeat", { callback: () => heartbeats++ });
    await orch.flush();
    // Leafnode interest propagates asynchronously.
    await sleep(1000);

    // 1–2. The join login at the leaf, answered from the hub.
    const joining = await connect({
      servers: leaf.url,
      authenticator: joinLogin(token),
      inboxPrefix: JOIN_INBOX_PREFIX,
      reconnect: false,
    });
    open.push(joining);
    results.joinLoginAtLeaf = true;
    const reply = await joining.request("shoal.join.node-1", text.encode("join"), { timeout: 3000 });
    results.joinAnsweredFromHub = new TextDecoder().decode(reply.data) === "joined shoal.join.node-1";
    // 3. The join login's template holds at the leaf.
    results.joinLoginRefusedHeartbeat = await refusedToPublish(joining, "shoal.compute.node-1.heartbeat");

    const node1Key = newNkey("user");
    const node1 = await connect({
      servers: leaf.url,
      authenticator: jwtLogin(operator.issueUser(node1Key.publicKey, "node-1", nodePermissions("node-1")), node1Key),
      inboxPrefix: nodeInboxPrefix("node-1"),
      reconnect: false,
    });
    open.push(node1);
    results.nodeJwtLoginAtLeaf = true;
    node1.publish("shoal.compute.node-1.heartbeat", text.encode("hb"));
    await node1.flush();
    await sleep(300);
    results.heartbeatReachedHub = heartbeats === 1;
    results.nodeRefusedOtherNodesSubject = await refusedToPublish(node1, "shoal.compute.node-2.heartbeat");
    results.otherNodesHeartbeatNotDelivered = heartbeats === 1;

    // 4. Revocation pushed to the hub.
    let node1Closed = false;
    void node1.closed().then(() => (node1Closed = true));
    const system = await connect({ servers: hub.url, authenticator: operator.systemLogin() });
    open.push(system);
    operator.revoke([node1Key.publicKey]);
    const pushedAt = performance.now();
    await pushAccountJwt(system, operator.account, operator.accountJwt());
    while (!node1Closed && performance.now() - pushedAt < 3000) await sleep(10);
    results.revokedNodeDroppedAtLeaf = node1Closed;
    results.revokedNodeDroppedAfterMs = node1Closed ? Math.round(performance.now() - pushedAt) : -1;
    const revokedJwt = userJwt(keys.accountSigner, node1Key.publicKey, "node-1", nodePermissions("node-1"), {
      issuerAccount: operator.account,
      iat: Math.floor(Date.now() / 1000) - 60,
    });
    results.revokedJwtRefusedAtLeaf = await connect({
      servers: leaf.url,
      authenticator: jwtLogin(revokedJwt, node1Key),
      reconnect: false,
    }).then(
      (nc) => (open.push(nc), false),
      () => true,
    );

    // 5. N node logins held at the leaf.
    const before = {
      leafRss: rssMB(leaf.pid),
      hubRss: rssMB(hub.pid),
      leafCpu: processCpuMs(leaf.pid),
      hubCpu: processCpuMs(hub.pid),
    };
    let next = 0;
    const held: { readonly nc: NatsConnection; readonly id: string }[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < nodes; i = next++) {
          const key = newNkey("user");
          const id = `leaf-node-${i}`;
          const nc = await connect({
            servers: leaf.url,
            authenticator: jwtLogin(operator.issueUser(key.publicKey, id, nodePermissions(id)), key),
            inboxPrefix: nodeInboxPrefix(id),
            reconnect: false,
          });
          open.push(nc);
          held.push({ nc, id });
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const heartbeatsBefore = heartbeats;
    for (const { nc, id } of held) nc.publish(`shoal.compute.${id}.heartbeat`, text.encode("hb"));
    await Promise.all(held.map(({ nc }) => nc.flush()));
    await sleep(2000);
    results.nodes = nodes;
    results.loginsPerSecondAtLeaf = Math.round(nodes / seconds);
    results.leafRssMB = `${before.leafRss} → ${rssMB(leaf.pid)}`;
    results.hubRssMB = `${before.hubRss} → ${rssMB(hub.pid)}`;
    results.leafKBPerConnection = Math.round(((rssMB(leaf.pid) - before.leafRss) * 1024) / nodes);
    results.leafCpuMsPerLogin = Number(((processCpuMs(leaf.pid) - before.leafCpu) / nodes).toFixed(3));
    results.hubCpuMsPerLogin = Number(((processCpuMs(hub.pid) - before.hubCpu) / nodes).toFixed(3));
    results.heartbeatsAtHubFromHeldNodes = heartbeats - heartbeatsBefore;
  } finally {
    await Promise.allSettled(open.map((nc) => nc.close()));
    await leaf.stop();
    await hub.stop();
    rmSync(root, { recursive: true, force: true });
  }
  console.log(JSON.stringify(results, null, 2));
}

// Only when run itself: the suite (bench/run.ts) imports every bench/*.ts to look for run(options).
if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
