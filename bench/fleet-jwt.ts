/**
 * Joins with NATS JWT users instead of config users (docs/security.md): an operator-mode
 * nats-server, and N node keys each given a user JWT signed by the account and logged in, with
 * `--concurrent` logins at once. Beside it, in the same run, the same N logins to a server with
 * no auth at all: the connection's own cost, the baseline. Reports logins/s for both, the ratio,
 * the time to sign one JWT, nats-server's RSS with the N connections open and the CPU it spent
 * per login (/proc/<pid>/stat).
 *
 * Run: npx tsx bench/fleet-jwt.ts [--users 5000] [--concurrent 256]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connect, type NatsConnection } from "nats";
import pino from "pino";
import { writeFileAtomic } from "../src/fs/write-file-atomic.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../src/transport/embedded-nats-server.ts";
import { nodePermissions } from "../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../src/transport/nats-jwt/jwt-login.ts";
import { newNkey } from "../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys } from "../src/transport/nats-jwt/nats-operator.ts";
import { freePort } from "./support/free-port.ts";
import { processCpuMs } from "./support/process-cpu.ts";
import { rssMB } from "./support/process-rss.ts";

const logger = pino({ level: "silent" });

async function run(
  users: number,
  concurrent: number,
  withJwt: boolean,
): Promise<{ perSecond: number; signMs: number; rssMB: number; rssBeforeMB: number; serverCpuMsPerLogin: number }> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-jwt-bench-"));
  const port = await freePort();
  const { pidFile, storeDir } = embeddedNatsPaths(dir);
  const operator = new NatsOperator(loadOrCreateOperatorKeys(join(dir, "credentials")), {
    joinToken: "bench",
    jetStreamDiskBytes: 256 * 1024 ** 2,
  });
  const configFile = join(dir, "nats-server.conf");
  const config = {
    listen: `127.0.0.1:${port}`,
    pid_file: pidFile,
    max_connections: users + 100,
    jetstream: { store_dir: storeDir, max_file_store: 256 * 1024 ** 2 },
    ...(withJwt ? operator.serverConfig() : {}),
  };
  writeFileAtomic(configFile, JSON.stringify(config), 0o600);
  const server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger, configFile });
  const conns: NatsConnection[] = [];
  try {
    const rssBeforeMB = rssMB(server.pid);
    const cpuBefore = processCpuMs(server.pid);
    let next = 0;
    let signMs = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrent }, async () => {
        for (let i = next++; i < users; i = next++) {
          const key = newNkey("user");
          const t = performance.now();
          const jwt = operator.issueUser(key.publicKey, `node-${i}`, nodePermissions(`node-${i}`));
          signMs += performance.now() - t;
          conns.push(
            await connect({
              servers: server.url,
              reconnect: false,
              ...(withJwt ? { authenticator: jwtLogin(jwt, key) } : {}),
            }),
          );
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const serverCpuMsPerLogin = (processCpuMs(server.pid) - cpuBefore) / users;
    return {
      perSecond: users / seconds,
      signMs: signMs / users,
      rssMB: rssMB(server.pid),
      rssBeforeMB,
      serverCpuMsPerLogin,
    };
  } finally {
    await Promise.all(conns.map((c) => c.close()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Only when run itself: the suite (bench/run.ts) imports every bench/*.ts to look for run(options).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { users: { type: "string", default: "5000" }, concurrent: { type: "string", default: "256" } },
  });
  const users = Number(values.users);
  const concurrent = Number(values.concurrent);
  const open = await run(users, concurrent, false);
  const jwt = await run(users, concurrent, true);
  console.log(`${users} node logins, ${concurrent} at once`);
  console.log(
    `  no auth (baseline): ${open.perSecond.toFixed(0)}/s, nats-server RSS ${open.rssBeforeMB} → ${open.rssMB} MB, CPU ${open.serverCpuMsPerLogin.toFixed(3)} ms per login`,
  );
  console.log(
    `  JWT users:          ${jwt.perSecond.toFixed(0)}/s (${(jwt.perSecond / open.perSecond).toFixed(2)} × baseline), nats-server RSS ${jwt.rssBeforeMB} → ${jwt.rssMB} MB, CPU ${jwt.serverCpuMsPerLogin.toFixed(3)} ms per login`,
  );
  console.log(`  signing one user JWT: ${jwt.signMs.toFixed(3)} ms; server reloads: 0`);
}
