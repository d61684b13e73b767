import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { ORCHESTRATOR_PERMISSIONS, nodePermissions } from "../../src/transport/nats-auth/nats-roles.ts";
import { configUsersNatsConfig } from "../support/config-users-nats-config.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { testAgent } from "../support/test-agent.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { freePort } from "../support/nats-server.ts";
import { storedStream } from "../support/stored-events.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function agentFor(natsUrl: string, nodeId: string, dataDir: string): ComputeAgent {
  const agent = testAgent({
    nodeId,
    orchestrators: [natsUrl],
    token: "join-me",
    dataDir,
    infoUpdateMs: 5000,
    resourceUpdateMs: 5000,
    initialBackoffMs: 50,
    maxBackoffMs: 200,
  });
  cleanups.push(() => agent.stop());
  return agent;
}

/**
 * An external NATS whose operator follows docs/security.md: a login for the orchestrator and
 * one nkey user per compute node (the entry `shoal compute --show-key` prints), nothing else.
 */
it("runs on an operator's NATS: the orchestrator logs in with its user, a node joins and speaks with the key the operator let in", async () => {
  const dir = tempDir("shoal-external-nats-");
  const port = await freePort();
  const edgeDir = tempDir("shoal-edge-1-");
  const edgeKey = loadOrCreateNodeKey(edgeDir, "edge-1");
  const configFile = join(dir, "operator.conf");
  writeFileSync(
    configFile,
    configUsersNatsConfig(
      {
        host: "127.0.0.1",
        port,
        serverName: "operator",
        ...embeddedNatsPaths(dir),
        maxFileStoreBytes: 256 * 1024 * 1024,
      },
      [
        { user: "shoal", password: "orchestrator-secret", permissions: ORCHESTRATOR_PERMISSIONS },
        { nkey: edgeKey.publicKey, permissions: nodePermissions("edge-1") },
      ],
    ),
  );
  const nats = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
  cleanups.push(() => nats.stop());

  const login = { "Orchestrator.NATS.User": "shoal", "Orchestrator.Auth.Token": "join-me" };
  await expect(
    startOrchestrator(orchestratorConfig(nats.url, { ...login, "Orchestrator.NATS.Password": "wrong" }), silentLogger),
  ).rejects.toThrow(`cannot connect to NATS at ${nats.url}`);
  // The default budget (1 GiB) does not fit this server's 256 MiB: said plainly, at start.
  await expect(
    startOrchestrator(
      orchestratorConfig(nats.url, { ...login, "Orchestrator.NATS.Password": "orchestrator-secret" }),
      silentLogger,
    ),
  ).rejects.toThrow("set Orchestrator.NATS.JetStreamMaxStore to what each server's JetStream can hold");
  const config = orchestratorConfig(nats.url, {
    ...login,
    "Orchestrator.NATS.Password": "orchestrator-secret",
    "Orchestrator.NATS.JetStreamMaxStore": 128 * 1024 * 1024,
  });
  const orchestrator: RunningOrchestrator = await startOrchestrator(config, silentLogger);
  cleanups.push(() => orchestrator.stop());

  const edge = agentFor(nats.url, "edge-1", edgeDir);
  await edge.start();
  expect(edge.isRegistered).toBe(true);
  const history = await storedStream(config.DataDir, "node-edge-1");
  expect(history.map((e) => e.type)).toEqual(["NodeRegistered", "NodeCredentialBound"]);
  expect(history[1]).toMatchObject({ data: { PublicKey: edgeKey.publicKey } });

  // A node the operator did not let in gets nowhere, and is told what to do.
  await expect(agentFor(nats.url, "edge-2", tempDir()).start()).rejects.toThrow(
    "its operator must add this node's key first: shoal compute --show-key",
  );
});

it("tells a node its key is not added on a NATS cluster whose servers advertise each other", async () => {
  // Per-user logins on three clustered servers: the node's key and the join login are refused on each.
  const include = join(tempDir("shoal-external-cluster-"), "users.conf");
  writeFileSync(include, 'authorization { users: [ { user: "admin", password: "admin-secret" } ] }\n');
  const cluster = await TestNatsCluster.start(3, { include, login: () => ({ user: "admin", pass: "admin-secret" }) });
  cleanups.push(() => cluster.stop());
  const agent = testAgent({ nodeId: "edge-3", orchestrators: [cluster.url("n1")], token: "join-me" });
  cleanups.push(() => agent.stop());
  await expect(agent.start()).rejects.toThrow("its operator must add this node's key first");
}, 30_000);
