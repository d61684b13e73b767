import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { Simulation } from "../../src/sim/simulation.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * `shoal sim`'s fleet against a real orchestrator with its own locked-down nats-server: every
 * virtual node joins with the token, logs in with its own key, and is seen over REST.
 */
const NODES = 50;
let orchestrator: RunningOrchestrator;
let sim: Simulation;
const simDataDir = tempDir("shoal-sim-test-");

interface ListedNode {
  readonly Info: { readonly NodeID: string; readonly NodeType: string; readonly Labels: Record<string, string> };
  readonly Membership: string;
  readonly Health: string;
}

async function simNodes(): Promise<ListedNode[]> {
  const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes?limit=1000`);
  expect(res.status).toBe(200);
  const { Nodes } = (await res.json()) as { Nodes: ListedNode[] };
  return Nodes.filter((n) => n.Info.Labels.sim === "true");
}

const healthOf = (nodes: ListedNode[]) => new Map(nodes.map((n) => [n.Info.NodeID, n.Health]));

beforeAll(async () => {
  const config = orchestratorConfig("", {
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    // No admission limit at all: this test is about the fleet, not the rate.
    "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
    "Orchestrator.NodeManager.DisconnectTimeout": 1500,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  sim = Simulation.start({
    nodes: NODES,
    idPrefix: "simtest",
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    heartbeatMs: 250,
    jitterMs: 50,
    infoUpdateMs: 2000,
    resourceUpdateMs: 1000,
    joinRatePerSecond: 100,
    // One join at a time: each reloads nats-server, which may refuse logins meanwhile, and an
    // agent refused its join login four times in a row gives up (reads it as a wrong token).
    // Concurrent joins reproduce that (bench/fleet-storm.ts); this test is about the fleet.
    maxJoining: 1,
    initialBackoffMs: 200,
    maxBackoffMs: 1000,
    logger: silentLogger,
    dataDir: simDataDir,
  });
}, 30_000);

afterAll(async () => {
  await sim?.stop();
  await orchestrator?.stop();
});

describe("shoal sim against a real orchestrator", () => {
  it("joins every virtual node over its own key: all listed APPROVED and HEALTHY, heartbeating, nothing refused", async () => {
    await waitFor(
      async () => {
        expect(sim.fleet.progress().gaveUp, "virtual nodes that gave up joining").toBe(0);
        const nodes = await simNodes();
        return nodes.length === NODES && nodes.every((n) => n.Membership === "APPROVED" && n.Health === "HEALTHY");
      },
      30_000,
      () => `all sim nodes APPROVED and HEALTHY: ${JSON.stringify(sim.fleet.progress())}`,
    );
    const nodes = await simNodes();
    expect(nodes.map((n) => n.Info.NodeID).sort()).toEqual(
      Array.from({ length: NODES }, (_, i) => sim.fleet.nodeId(i)),
    );
    expect(new Set(nodes.map((n) => n.Info.NodeType))).toEqual(new Set(["Compute"]));
    await waitFor(
      () => sim.fleet.progress().heartbeating === NODES,
      10_000,
      () => `heartbeating: ${JSON.stringify(sim.fleet.progress())}`,
    );
    const progress = sim.fleet.progress();
    expect(progress).toMatchObject({
      registered: NODES,
      running: NODES,
      joinsAccepted: NODES,
      refused: 0,
      gaveUp: 0,
      killed: 0,
    });
    // The JWTs each node's nats-server login needs are kept by the fleet in memory: no file per node.
    const credentials = join(simDataDir, "credentials");
    expect(existsSync(credentials) ? readdirSync(credentials).filter((f) => f.endsWith(".jwt")) : []).toEqual([]);
    // Each joined under its own key: the orchestrator's nats-server admits exactly these keys.
    for (let i = 0; i < NODES; i++)
      expect(orchestrator.manager.live(sim.fleet.nodeId(i))?.lastHeartbeat).not.toBeNull();
  });

  it("turns a killed share UNHEALTHY (and only it), and HEALTHY again once revived", async () => {
    const killed = sim.fleet.kill(0.2);
    expect(killed).toHaveLength(NODES * 0.2);
    expect(sim.fleet.progress()).toMatchObject({ killed: killed.length, running: NODES - killed.length });
    await waitFor(
      async () => {
        const health = healthOf(await simNodes());
        return killed.every((id) => health.get(id) === "UNHEALTHY");
      },
      15_000,
      () => "killed nodes UNHEALTHY",
    );
    const health = healthOf(await simNodes());
    const survivors = [...health].filter(([id]) => !killed.includes(id));
    expect(survivors).toHaveLength(NODES - killed.length);
    for (const [id, h] of survivors) expect(h, id).toBe("HEALTHY");

    expect(sim.fleet.revive().sort()).toEqual([...killed].sort());
    await waitFor(
      async () => [...healthOf(await simNodes()).values()].every((h) => h === "HEALTHY"),
      15_000,
      () => "revived nodes HEALTHY",
    );
    await waitFor(
      () => sim.fleet.progress().registered === NODES,
      10_000,
      () => JSON.stringify(sim.fleet.progress()),
    );
    // A restarted node confirms itself with its sentinel and key: no second join.
    expect(sim.fleet.progress()).toMatchObject({ joinsAccepted: NODES, killed: 0, refused: 0, gaveUp: 0 });
  });
});
