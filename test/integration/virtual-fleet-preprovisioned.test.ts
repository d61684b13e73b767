import { nkeys } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { currentNatsOperator } from "../../src/orchestrator/nats-credentials.ts";
import { VirtualFleet, type VirtualFleetOptions } from "../../src/sim/virtual-fleet.ts";
import { nodePermissions } from "../../src/transport/nats-auth/nats-roles.ts";
import { userNkeyFromSeed } from "../../src/transport/nkey-signature.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * A pre-provisioned virtual fleet against the orchestrator's own nats-server (operator mode): its
 * nodes' keys are bound in the store and their sentinels written, and each is handed the user JWT
 * the orchestrator's operator issues for its key. They log in as themselves and heartbeat without
 * a join; their join token is wrong on purpose, so a node that could not log in would give up.
 */
const NODES = 3;
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
const fleetDir = tempDir("shoal-preprovisioned-fleet-");
const keys = Array.from({ length: NODES }, () => userNkeyFromSeed(nkeys.createUser().getSeed()));
const fleets: VirtualFleet[] = [];

function fleet(options: Partial<VirtualFleetOptions>): VirtualFleet {
  const f = new VirtualFleet({
    nodes: NODES,
    idPrefix: "pre",
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    heartbeatMs: 250,
    jitterMs: 50,
    infoUpdateMs: 5_000,
    resourceUpdateMs: 5_000,
    joinRatePerSecond: 100,
    maxJoining: 1,
    initialBackoffMs: 100,
    maxBackoffMs: 200,
    logger: silentLogger,
    dataDir: fleetDir,
    key: (index) => keys[index]!,
    ...options,
  });
  fleets.push(f);
  return f;
}

beforeAll(async () => {
  config = orchestratorConfig("", {
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  // Provisioned through a join once: the keys bound in the store, the sentinels in fleetDir. The
  // JWTs that join returned stay with this fleet, as a machine's would be lost with its disk.
  const joined = fleet({});
  joined.start();
  await waitFor(
    () => joined.progress().registered === NODES,
    30_000,
    () => `joined: ${JSON.stringify(joined.progress())}`,
  );
  await joined.stop();
}, 60_000);

afterAll(async () => {
  for (const f of fleets) await f.stop();
  await orchestrator?.stop();
});

describe("a pre-provisioned virtual fleet", () => {
  it("logs in with the JWTs the orchestrator's operator issues for its keys and heartbeats, with no join", async () => {
    const operator = currentNatsOperator(config)!;
    const f: VirtualFleet = fleet({
      token: "not-the-join-token",
      jwt: (index) => operator.issueUser(keys[index]!.publicKey, f.nodeId(index), nodePermissions(f.nodeId(index))),
    });
    f.start();
    await waitFor(
      () => {
        expect(f.progress().gaveUp, "virtual nodes that gave up").toBe(0);
        const p = f.progress();
        return p.registered === NODES && p.joining === 0 && p.heartbeating === NODES;
      },
      20_000,
      () => `pre-provisioned: ${JSON.stringify(f.progress())}`,
    );
    expect(f.progress()).toMatchObject({ joinsAccepted: 0, refused: 0, gaveUp: 0 });
  });
});
