/**
 * The honest protocol's transport cost: one authenticated NATS connection per node. Starts the
 * orchestrator's kind of nats-server (the config NatsAccess writes: N node nkey users with their
 * per-node permissions, JetStream on), then opens N connections, each logging in with its own
 * key (natively signed nonce) and subscribing to its own reply inbox and work subjects, as an
 * agent does. Reports nats-server's RSS per connection, the time to connect them all, and this
 * process's RSS (what a simulator pays per node).
 *
 * Run: npx tsx bench/fleet-connections.ts [--connections 1000,5000,10000,19000]
 * Bounded by `ulimit -n`, in this process and in nats-server alike.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connect, nkeys, type NatsConnection } from "nats";
import pino from "pino";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../src/transport/embedded-nats-server.ts";
import { NatsAccess } from "../src/transport/nats-auth/nats-access.ts";
import { nkeyLogin, userNkeyFromSeed } from "../src/transport/nkey-signature.ts";
import { nodeInboxPrefix, nodeWorkSubjects } from "../src/transport/subjects.ts";
import { freePort } from "./support/free-port.ts";
import { rssMB } from "./support/process-rss.ts";

const logger = pino({ level: "silent" });



async function measure(count: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-conns-"));
  const port = await freePort();
  const access = NatsAccess.create(
    join(dir, "nats-server.conf"),
    { host: "127.0.0.1", port, serverName: `bench-${port}`, ...embeddedNatsPaths(dir), maxFileStoreBytes: 256 * 1024 ** 2 },
    { orchestratorPassword: "bench-orchestrator", joinToken: "bench-token", readerPassword: "bench-reader" },
    logger,
  );
  const keys = Array.from({ length: count }, (_, i) => ({ nodeId: `node-${i}`, key: userNkeyFromSeed(nkeys.createUser().getSeed()) }));
  // The users are in the config the server starts with: this measures connections, not reloads (bench/fleet-reload.ts).
  await access.replaceAll(keys.map(({ nodeId, key }) => [nodeId, key.publicKey] as const));
  const server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger, configFile: access.file });
  const open: NatsConnection[] = [];
  try {
    const idleRss = rssMB(server.pid);
    const simBefore = process.memoryUsage.rss();
    const t0 = performance.now();
    const CONCURRENT = 200;
    for (let i = 0; i < count; i += CONCURRENT) {
      const batch = keys.slice(i, i + CONCURRENT).map(async ({ nodeId, key }) => {
        const nc = await connect({ servers: server.url, authenticator: nkeyLogin(key), inboxPrefix: nodeInboxPrefix(nodeId), reconnect: false, timeout: 20_000 });
        nc.subscribe(nodeWorkSubjects(nodeId), { callback: () => undefined });
        // The first request creates the inbox subscription; a flush makes the server hold both.
        nc.subscribe(`${nodeInboxPrefix(nodeId)}.*`, { callback: () => undefined });
        await nc.flush();
        return nc;
      });
      open.push(...(await Promise.all(batch)));
    }
    const connectS = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const rss = rssMB(server.pid);
    return {
      connections: count,
      connectS: Math.round(connectS * 10) / 10,
      connectsPerSecond: Math.round(count / connectS),
      natsServerIdleRssMB: idleRss,
      natsServerRssMB: rss,
      natsServerKBPerConnection: Math.round(((rss - idleRss) * 1024) / count),
      clientKBPerConnection: Math.round((process.memoryUsage.rss() - simBefore) / 1024 / count),
    };
  } finally {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(options: { connections?: readonly number[]; log?: (line: string) => void } = {}): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  for (const count of options.connections ?? [1_000, 5_000, 10_000]) {
    const m = await measure(count);
    (options.log ?? console.error)(JSON.stringify(m));
    for (const [k, v] of Object.entries(m)) if (k !== "connections") out[`${k}@${count}`] = v;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { connections: { type: "string" } } });
  console.log(JSON.stringify(await run(values.connections === undefined ? {} : { connections: values.connections.split(",").map(Number) }), null, 2));
}
