import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulation } from "../../src/sim/simulation.ts";
import type { Body } from "../support/job-api-client.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";
import { VIRTUAL_DAEMON_JOB, VirtualFleetCluster } from "../support/virtual-fleet-cluster.ts";

/**
 * A partition of most of a fleet (docs/jobs.md, Node reactions): `shoal sim`'s virtual nodes
 * against an orchestrator on a manual clock, real NATS and SQLite. Every node holds an execution
 * of a daemon job (virtual nodes run nothing, so it stays New: under way, within an answer bound
 * longer than this test's clock). 70 % of them go silent
 * at once: their work must not all move; it moves at the secondary eviction rate, one node per
 * 100 s of the clock, and the nodes that come back before their turn keep it.
 */
const NODES = 60;
const DISCONNECT_MS = 10_000;
let cluster: VirtualFleetCluster;
let sim: Simulation;
const call = (method: string, path: string, body?: unknown) => cluster.api.call(method, path, body);
const pass = (ms: number, stepMs: number) => cluster.pass(ms, { stepMs });

beforeAll(async () => {
  cluster = await VirtualFleetCluster.start("partition", {
    "Orchestrator.NodeManager.DisconnectTimeout": DISCONNECT_MS,
    // A fleet of 60 is "large" here: past the threshold, work moves at the secondary rate instead of not at all.
    "Orchestrator.NodeManager.LargeClusterSizeThreshold": 20,
  });
  sim = cluster.fleet(NODES, "part");
  await cluster.allHeartbeating(120_000);
  // Past the grace after the start.
  await pass(DISCONNECT_MS, 1_000);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a partition of 70 % of the fleet", () => {
  it("moves no storm of work: the first node's at once, then one per 100 s of the clock; the rest keep theirs when they come back", async () => {
    const jobId = await cluster.api.submit(VIRTUAL_DAEMON_JOB);
    const executions = async (): Promise<Body[]> =>
      (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions?limit=1000`)).body?.Items ?? [];
    const placed = (count: number) =>
      waitFor(
        async () => (await executions()).length === count,
        60_000,
        () => `${count} executions`,
      );
    // At most 20 executions per evaluation; the next evaluation is a deadline 100 ms later on the orchestrator's
    // clock, so the rest waits for this test's clock, however much real time passes.
    await placed(20);
    await sleep(1_000);
    expect(await executions()).toHaveLength(20);
    await cluster.clock.advance(100);
    await placed(40);
    await cluster.clock.advance(100);
    await placed(NODES);

    const cut = new Set(sim.fleet.kill(0.7));
    expect(cut.size).toBe(42);
    // 400 s of the clock: nodes go UNHEALTHY after 10 s; at 0.01 nodes/s at most 1 + 4 more may lose their work.
    await pass(400_000, 2_000);
    const unhealthy = (await call("GET", "/api/v1/orchestrator/nodes?limit=1000")).body.Nodes.filter(
      (n: Body) => n.Health === "UNHEALTHY",
    ).map((n: Body) => n.Info.NodeID);
    expect(new Set(unhealthy)).toEqual(cut);

    const all = await storedEvents(cluster.dataDir);
    const mine = new Set((await executions()).map((e) => `execution-${e.ID as string}`));
    const lost = all.filter((e) => mine.has(e.stream) && e.type === "ExecutionFailed");
    // Only silent nodes lost work, each loss by the workflow with its reason.
    for (const e of lost) {
      expect(e.metadata).toMatchObject({ actor: { type: "workflow", id: "node-reactions" } });
      expect((e.metadata as Body).reason).toMatch(/^node part-\d+ became UNHEALTHY$/);
      expect(cut.has(((e.data as Body).Message as string).split(" ")[3] as string)).toBe(true);
    }
    expect(lost.length).toBeGreaterThanOrEqual(2);
    expect(lost.length).toBeLessThanOrEqual(5);
    // Past the first (moved while the share was still small), one per 100 s at most.
    const times = lost.map((e) => Date.parse(e.time));
    for (let i = 2; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(100_000);
    // Every silent node waited with a recorded step: one per node, whatever moved.
    const steps = all.filter(
      (e) =>
        e.stream === "workflow-node-reactions" &&
        e.type === "WorkflowStepRecorded" &&
        (e.data as Body).Input.Type === "NodeBecameUnhealthy" &&
        cut.has((e.data as Body).Input.Stream.slice("node-".length)),
    );
    expect(steps).toHaveLength(42);

    // The partition heals: the nodes whose turn had not come keep their executions.
    sim.fleet.revive();
    await waitFor(
      () => sim.fleet.progress().heartbeating === NODES,
      60_000,
      () => `all back: ${JSON.stringify(sim.fleet.progress())}`,
    );
    await pass(30_000, 2_000);
    const after = (await storedEvents(cluster.dataDir)).filter(
      (e) => mine.has(e.stream) && e.type === "ExecutionFailed",
    );
    expect(after).toHaveLength(lost.length);
  }, 300_000);
});
