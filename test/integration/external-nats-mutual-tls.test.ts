import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { computeNatsTls } from "../../src/compute/compute-nats-tls.ts";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { ORCHESTRATOR_PERMISSIONS, nodePermissions } from "../../src/transport/nats-auth/nats-roles.ts";
import { configUsersNatsConfig } from "../support/config-users-nats-config.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { runShoal, waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * An external NATS whose operator made its certificates with `shoal tls issue` and verifies clients' certificates
 * (mutual TLS): the orchestrator gets in with its client certificate and is told what to set without one. Compute
 * nodes present none: they are refused with why, and join once the server no longer asks them for one.
 */
it("runs an orchestrator on a NATS with mutual TLS made by shoal tls issue; nodes join where clients are not verified", async () => {
  const dir = tempDir("shoal-mtls-");
  const tls = join(dir, "tls");
  const issued = await runShoal([
    ...["tls", "issue", "--out", tls, "--server", "nats-1=localhost,127.0.0.1", "--client", "orchestrator"],
  ]);
  expect(issued.code).toBe(0);
  const port = await freePort();
  const edgeDir = tempDir("shoal-mtls-edge-");
  const edgeKey = loadOrCreateNodeKey(edgeDir, "edge-1");
  const served = JSON.parse(
    configUsersNatsConfig(
      { host: "127.0.0.1", port, serverName: "nats-1", ...embeddedNatsPaths(dir), maxFileStoreBytes: 256 << 20 },
      [
        { user: "shoal", password: "orchestrator-secret", permissions: ORCHESTRATOR_PERMISSIONS },
        { nkey: edgeKey.publicKey, permissions: nodePermissions("edge-1") },
      ],
    ),
  ) as Record<string, unknown>;
  const configFile = join(dir, "nats.conf");
  const serve = (verify: boolean) =>
    writeFileSync(
      configFile,
      JSON.stringify({
        ...served,
        tls: {
          cert_file: join(tls, "nats-1.crt"),
          key_file: join(tls, "nats-1.key"),
          ca_file: join(tls, "ca.crt"),
          verify,
        },
      }),
    );
  serve(true);
  const nats = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
  cleanups.push(() => nats.stop());

  const withCa = {
    "Orchestrator.NATS.User": "shoal",
    "Orchestrator.NATS.Password": "orchestrator-secret",
    "Orchestrator.Auth.Token": "join-me",
    "Orchestrator.NATS.JetStreamMaxStore": 128 << 20,
    "Orchestrator.NATS.TLS.CACert": join(tls, "ca.crt"),
  };
  const node = () => {
    const agent = testAgent({
      nodeId: "edge-1",
      orchestrators: [nats.url],
      token: "join-me",
      dataDir: edgeDir,
      initialBackoffMs: 50,
      maxBackoffMs: 200,
      tls: computeNatsTls(
        {
          "Compute.Orchestrators": [nats.url],
          "Compute.TLS.CACert": join(tls, "ca.crt"),
          "Compute.TLS.Insecure": false,
        },
        [],
        silentLogger,
      ),
    });
    cleanups.push(() => agent.stop());
    return agent;
  };
  const verifies = `the NATS server at ${nats.url} verifies client certificates (mutual TLS) and did not let this client in`;
  // Both wait out nats.js's connect timeout (the server only ends the handshake): side by side.
  await Promise.all([
    expect(startOrchestrator(orchestratorConfig(nats.url, withCa), silentLogger)).rejects.toThrow(
      `${verifies}: set Orchestrator.NATS.TLS.ClientCertFile and ClientKeyFile`,
    ),
    expect(node().start()).rejects.toThrow(`${verifies}: compute nodes present no client certificate`),
  ]);

  const orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, {
      ...withCa,
      "Orchestrator.NATS.TLS.ClientCertFile": join(tls, "orchestrator.crt"),
      "Orchestrator.NATS.TLS.ClientKeyFile": join(tls, "orchestrator.key"),
    }),
    silentLogger,
  );
  cleanups.push(() => orchestrator.stop());

  // The operator's way for nodes: TLS that checks the server only; nodes log in with their own keys.
  serve(false);
  nats.reload();
  const edge = node();
  await edge.start();
  expect(edge.isRegistered).toBe(true);
  await waitFor(
    () => orchestrator.manager.isRegistered("edge-1"),
    10_000,
    () => "edge-1 registered",
  );
}, 90_000);
