import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, nkeyAuthenticator, type ConnectionOptions } from "nats";
import { afterAll, expect, it } from "vitest";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { natsConfigFile, nkeyVariable, serviceEnv } from "../support/compose-file.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * The logins of deploy/nats/authorization.conf on a real nats-server, with the environment docker-compose.yml gives
 * it, and passwords nats-server would misread if it took a variable's value as config: digits only (a number), or
 * with a # (a comment) or ; (the end of a value) in them.
 */
it("lets the orchestrators, event readers and compute nodes log in with what docker-compose.yml gives each", async () => {
  const dir = tempDir("shoal-compose-nats-");
  const computeDir = tempDir("shoal-compose-compute-1-");
  const key = loadOrCreateNodeKey(computeDir, "compute-1");
  const shell = {
    SHOAL_JOIN_TOKEN: "join-token-of-at-least-a-few-characters",
    SHOAL_API_KEY: "api-key-of-at-least-twenty-characters",
    SHOAL_NATS_PASSWORD: "12345678901234567890",
    SHOAL_EVENTS_READER_PASSWORD: "r3ad#er;pass word",
    SHOAL_KURRENTDB_PASSWORD: "kurrentdb-admin-password",
    SHOAL_KURRENTDB_OPS_PASSWORD: "kurrentdb-ops-password",
    SHOAL_PROMETHEUS_API_KEY: "prometheus-api-key-of-twenty-characters",
    SHOAL_COMPUTE_METRICS_TOKEN: "compute-metrics-token-0123456789",
    SHOAL_GRAFANA_PASSWORD: "grafana-password",
    [nkeyVariable("compute-1")]: key.publicKey,
    [nkeyVariable("compute-2")]: loadOrCreateNodeKey(tempDir(), "compute-2").publicKey,
  };
  // nats-1's config but on a loopback port, alone (no routes), with JetStream in a temporary directory.
  const port = await freePort();
  const paths = embeddedNatsPaths(dir);
  copyFileSync(join(natsConfigFile("nats-1"), "../authorization.conf"), join(dir, "authorization.conf"));
  const configFile = join(dir, "nats.conf");
  writeFileSync(
    configFile,
    [
      `server_name: nats-1`,
      `listen: "127.0.0.1:${port}"`,
      `pid_file: ${JSON.stringify(paths.pidFile)}`,
      `jetstream { store_dir: ${JSON.stringify(paths.storeDir)}, max_file_store: 256MB }`,
      "include ./authorization.conf",
    ].join("\n"),
  );
  const nats = await EmbeddedNatsServer.start({
    host: "127.0.0.1",
    port,
    dir,
    logger: silentLogger,
    configFile,
    env: serviceEnv("nats-1", shell),
  });
  cleanups.push(() => nats.stop());
  const logsIn = async (auth: Partial<ConnectionOptions>) => {
    const nc = await connect({ servers: nats.url, reconnect: false, ...auth });
    await nc.flush();
    await nc.close();
    return true;
  };

  // The orchestrator logs in with what its own config says, and uses JetStream.
  // Its API's certificate files are tls-init's, in a volume this test does not make: not what NATS logins need.
  const {
    SHOAL_API_TLS_CERTFILE: _cert,
    SHOAL_API_TLS_KEYFILE: _key,
    ...orchestratorEnv
  } = serviceEnv("orchestrator-1", shell);
  const orchestrator = loadConfig({ env: orchestratorEnv });
  const nc = await connect({
    servers: nats.url,
    user: orchestrator["Orchestrator.NATS.User"],
    pass: orchestrator["Orchestrator.NATS.Password"],
  });
  cleanups.push(() => nc.close());
  const leases = await nc.jetstream().views.kv("SHOAL_LEASES", { history: 1 });
  await leases.create("p-0", "orchestrator-1");
  expect((await leases.get("p-0"))?.string()).toBe("orchestrator-1");

  expect(await logsIn({ user: "shoal-events-reader", pass: shell.SHOAL_EVENTS_READER_PASSWORD })).toBe(true);
  await expect(logsIn({ user: "shoal-events-reader", pass: "r3ad" })).rejects.toThrow(/Authorization/i);
  expect(await logsIn({ authenticator: nkeyAuthenticator(key.seed) })).toBe(true);
}, 30_000);
