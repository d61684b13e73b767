/**
 * What one join costs the orchestrator's nats-server: every join adds an nkey user to the
 * generated config and reloads the server (NatsAccess, coalesced). Measures, with the real
 * NatsAccess and nats-server, the time of one applied change (write, SIGHUP, confirmed login)
 * with N node users already in the config, the config's size, and nats-server's RSS.
 *
 * Run: npx tsx bench/fleet-reload.ts [--users 1000,10000,50000] [--reloads 5]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Empty, connect, nkeys } from "nats";
import pino from "pino";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../src/transport/embedded-nats-server.ts";
import { NatsAccess } from "../src/transport/nats-auth/nats-access.ts";
import { userNkeyFromSeed } from "../src/transport/nkey-signature.ts";
import { ORCHESTRATOR_INBOX_PREFIX, ORCHESTRATOR_USER } from "../src/transport/nats-auth/nats-roles.ts";
import { freePort } from "./support/free-port.ts";
import { rssMB } from "./support/process-rss.ts";

const logger = pino({ level: "silent" });



export interface FleetReloadOptions {
  readonly users?: readonly number[];
  readonly reloads?: number;
  readonly log?: (line: string) => void;
}

async function measure(users: number, reloads: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-reload-"));
  const port = await freePort();
  const orchestratorPassword = "bench-orchestrator";
  const access = NatsAccess.create(
    join(dir, "nats-server.conf"),
    { host: "127.0.0.1", port, serverName: `bench-${port}`, ...embeddedNatsPaths(dir), maxFileStoreBytes: 256 * 1024 ** 2 },
    { orchestratorPassword, joinToken: "bench-token", readerPassword: "bench-reader" },
    logger,
  );
  const bindings = Array.from({ length: users }, (_, i) => [`node-${i}`, userNkeyFromSeed(nkeys.createUser().getSeed()).publicKey] as const);
  access.write();
  const server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger, configFile: access.file });
  const nc = await connect({ servers: server.url, user: ORCHESTRATOR_USER, pass: orchestratorPassword, inboxPrefix: ORCHESTRATOR_INBOX_PREFIX });
  try {
    access.attach({
      url: server.url,
      reload: () => server.reload(),
      jetStreamAnswers: async () => void (await nc.request("$JS.API.INFO", Empty, { timeout: 1000 })),
    });
    const t0 = performance.now();
    await access.replaceAll(bindings);
    const firstMs = performance.now() - t0;
    const times: number[] = [];
    for (let r = 0; r < reloads; r++) {
      const t = performance.now();
      await access.apply(`joiner-${r}`, userNkeyFromSeed(nkeys.createUser().getSeed()).publicKey);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return {
      users,
      reloadMsMedian: Math.round(times[Math.floor(times.length / 2)] as number),
      reloadMsMax: Math.round(times[times.length - 1] as number),
      loadAllUsersMs: Math.round(firstMs),
      configMB: Math.round((statSync(access.file).size / 2 ** 20) * 10) / 10,
      natsServerRssMB: rssMB(server.pid),
      // With reloads one at a time and joins arriving meanwhile sharing the next one, a join waits 1–2 reloads.
      joinsPerSecondIfOnePerReload: Math.round(1000 / (times[Math.floor(times.length / 2)] as number)),
    };
  } finally {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(options: FleetReloadOptions = {}): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  for (const users of options.users ?? [1_000, 10_000, 50_000]) {
    const m = await measure(users, options.reloads ?? 5);
    (options.log ?? console.error)(JSON.stringify(m));
    for (const [k, v] of Object.entries(m)) if (k !== "users") out[`${k}@${users}`] = v;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { users: { type: "string" }, reloads: { type: "string" } } });
  const result = await run({
    ...(values.users === undefined ? {} : { users: values.users.split(",").map(Number) }),
    ...(values.reloads === undefined ? {} : { reloads: Number(values.reloads) }),
  });
  console.log(JSON.stringify(result, null, 2));
}
