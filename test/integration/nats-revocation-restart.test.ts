import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "nats";
import { afterAll, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { nodeStateSnapshotPath } from "../../src/snapshots/node-state-snapshot-file.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { NatsOperator, loadOrCreateOperatorKeys, revocationsIn } from "../../src/transport/nats-jwt/nats-operator.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * A crash between a revocation's event and its push to NATS: the store says the key is revoked,
 * the server's config does not. The restarted orchestrator must keep the key out.
 */
const running: RunningOrchestrator[] = [];
afterAll(async () => {
  for (const o of running) await o.stop();
});

/** An orchestrator with its own NATS on a fresh DataDir, and node n1 that joined it and stopped: its login. */
async function orchestratorJoinedOnce(dataDirPrefix: string) {
  const config = await ownNatsOrchestratorConfig(dataDirPrefix);
  const first = await startOrchestrator(config, silentLogger);
  running.push(first);
  const dataDir = tempDir("shoal-n1-");
  const agent = testAgent({ nodeId: "n1", orchestrators: [first.natsUrl], token: first.joinToken.token, dataDir });
  await agent.start();
  const jwt = readFileSync(join(dataDir, "credentials", "n1.jwt"), "utf8").trim();
  const key = loadOrCreateNodeKey(dataDir, "n1");
  await agent.stop();
  return { config, first, jwt, key };
}

/** The NATS operator the orchestrator on `config`'s DataDir signs its server's config with. */
function operatorOf(config: ShoalConfig, joinToken: string) {
  const keys = loadOrCreateOperatorKeys(join(config.DataDir, "credentials"));
  const operator = new NatsOperator(keys, {
    joinToken,
    jetStreamDiskBytes: config["Orchestrator.NATS.JetStreamMaxStore"],
  });
  return { keys, operator };
}

it("revokes at start every key the store shows revoked that the server's config does not", async () => {
  const { config, first, jwt, key } = await orchestratorJoinedOnce("shoal-revoke-restart-");
  await first.manager.operatorAction(
    "reject",
    "n1",
    commandContext({ type: "operator", id: "alice" }, { reason: "not ours" }),
  );
  await first.stop();
  running.pop();

  // The crash: the config as it was before the revocation was written.
  const configFile = join(config.DataDir, "nats", "nats-server.conf");
  const { keys, operator } = operatorOf(config, first.joinToken.token);
  const text = JSON.parse(readFileSync(configFile, "utf8")) as { resolver_preload: Record<string, string> };
  expect(revocationsIn(JSON.stringify(text), keys.operatorSigner.publicKey, operator.account).has(key.publicKey)).toBe(
    true,
  );
  text.resolver_preload[operator.account] = operator.accountJwt();
  writeFileSync(configFile, JSON.stringify(text));
  expect(revocationsIn(readFileSync(configFile, "utf8"), keys.operatorSigner.publicKey, operator.account).size).toBe(0);

  const second = await startOrchestrator(config, silentLogger);
  running.push(second);
  expect(
    revocationsIn(readFileSync(configFile, "utf8"), keys.operatorSigner.publicKey, operator.account).has(key.publicKey),
  ).toBe(true);
  await expect(
    connect({ servers: second.natsUrl, authenticator: jwtLogin(jwt, key), reconnect: false }),
  ).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });
});

// A deleted node's state no longer holds its key: the revocation is known from its NodeCredentialRevoked, folded by the
// node read model (from the start, or from a snapshot older than the deletion).
for (const start of ["without a snapshot", "from a snapshot older than the deletion"] as const)
  it(`keeps a deleted node's key out after a crash that lost its revocation, starting ${start}`, async () => {
    const { config, first, jwt, key } = await orchestratorJoinedOnce("shoal-revoke-deleted-");
    await first.stop();
    running.pop();
    const snapshotFile = nodeStateSnapshotPath(config.DataDir);
    const olderSnapshot = `${snapshotFile}.before-delete`;
    copyFileSync(snapshotFile, olderSnapshot);
    const configFile = join(config.DataDir, "nats", "nats-server.conf");
    const configBefore = readFileSync(configFile, "utf8");

    const second = await startOrchestrator(config, silentLogger);
    running.push(second);
    await second.manager.operatorAction("delete", "n1", commandContext({ type: "operator", id: "alice" }));
    await second.stop();
    running.pop();
    const { keys, operator } = operatorOf(config, first.joinToken.token);
    const { account } = operator;
    const revoked = () => revocationsIn(readFileSync(configFile, "utf8"), keys.operatorSigner.publicKey, account);
    expect(revoked().has(key.publicKey)).toBe(true);

    // The crash: the config as it was before the revocation was written, and no snapshot newer than the deletion.
    writeFileSync(configFile, configBefore);
    expect(revoked().has(key.publicKey)).toBe(false);
    if (start === "without a snapshot") rmSync(snapshotFile);
    else copyFileSync(olderSnapshot, snapshotFile);

    const third = await startOrchestrator(config, silentLogger);
    running.push(third);
    expect(revoked().has(key.publicKey)).toBe(true);
    await expect(
      connect({ servers: third.natsUrl, authenticator: jwtLogin(jwt, key), reconnect: false }),
    ).rejects.toMatchObject({ code: "AUTHORIZATION_VIOLATION" });
  });
