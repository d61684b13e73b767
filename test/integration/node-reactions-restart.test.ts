import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import type { Simulation } from "../../src/sim/simulation.ts";
import type { Body } from "../support/job-api-client.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";
import { VIRTUAL_DAEMON_JOB, VirtualFleetCluster } from "../support/virtual-fleet-cluster.ts";

/**
 * The silent nodes' queue across a restart (docs/jobs.md, Node reactions): `shoal sim`'s virtual
 * nodes against an orchestrator on a manual clock, real NATS and SQLite. Two of six nodes go
 * silent together: the first loses its work at once, the second waits its turn (10 s at
 * NodeEvictionRate). The orchestrator stops before that turn and starts again: the queue is folded
 * from the workflow's stream, so the second node's work is lost for the reason and the cause its
 * own step recorded, not found again as something else. Then the two dead nodes come back and are
 * told to stop what was lost with them, die again holding nothing, and the orchestrator restarts:
 * back once more, they are told nothing again (what a node back is told is folded from the store).
 */
const DISCONNECT_MS = 10_000;
let cluster: VirtualFleetCluster;
const sims: Simulation[] = [];
/** The first test's daemon job, and its two nodes that died (their executions lost with them), for the second. */
let daemonJobId = "";
let goneNodes: string[] = [];

const call = (method: string, path: string, body?: unknown) => cluster.api.call(method, path, body);
/** Moves the clock on in 1 s steps, with real time between them for the live nodes' heartbeats, until `done`. */
const pass = (ms: number, done?: () => Promise<boolean>) => cluster.pass(ms, { until: done });

beforeAll(async () => {
  cluster = await VirtualFleetCluster.start("reactions-restart", {
    "Orchestrator.NodeManager.DisconnectTimeout": DISCONNECT_MS,
  });
  sims.push(cluster.fleet(4, "stay"), cluster.fleet(2, "gone"));
  await cluster.allHeartbeating(120_000);
  // Past the grace after the start.
  await pass(DISCONNECT_MS);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a restart while a silent node waits its turn", () => {
  it("folds the queue from the workflow's stream: the node's work is lost later for its own step's reason and cause", async () => {
    const jobId = await cluster.api.submit(VIRTUAL_DAEMON_JOB);
    daemonJobId = jobId;
    const executions = async (): Promise<Body[]> =>
      (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions?limit=100`)).body?.Items ?? [];
    await waitFor(
      async () => (await executions()).length === 6,
      60_000,
      () => "an execution on every node",
    );
    const byNode = new Map((await executions()).map((e) => [e.NodeID as string, `execution-${e.ID as string}`]));

    const gone = (sims[1] as Simulation).fleet.kill(1);
    expect(gone).toHaveLength(2);
    goneNodes = gone;
    const lost = async (): Promise<RecordedEvent[]> => {
      const streams = new Set(gone.map((n) => byNode.get(n)));
      return (await storedEvents(cluster.dataDir)).filter((e) => streams.has(e.stream) && e.type === "ExecutionFailed");
    };
    await pass(3 * DISCONNECT_MS, async () => (await lost()).length > 0);
    const first = await lost();
    expect(first).toHaveLength(1);
    const released = ((first[0] as RecordedEvent).data as Body).Message.split(" ")[3] as string;
    const waiting = gone.find((n) => n !== released) as string;
    // Its turn is 10 s of the clock away: the orchestrator stops before it.
    await cluster.stopOrchestrator();
    const stopped = await storedEvents(cluster.dataDir);
    const stream = stopped.filter((e) => e.stream === "workflow-node-reactions");
    expect(stream.filter((e) => e.type === "NodeLossReleased").map((e) => (e.data as Body).NodeID)).toEqual([released]);
    expect(await lost()).toHaveLength(1);

    await cluster.startOrchestrator();
    await waitFor(
      async () =>
        (await call("GET", "/api/v1/orchestrator/nodes?limit=100")).body.Nodes.filter(
          (n: Body) => n.Health === "HEALTHY",
        ).length >= 4,
      60_000,
      () => "the live nodes heartbeating the new orchestrator",
    );
    // The grace after the start, then its turn.
    await pass(4 * DISCONNECT_MS, async () => (await lost()).length === 2);
    const all = await storedEvents(cluster.dataDir);
    const silentEvent = all.find((e) => e.stream === `node-${waiting}` && e.type === "NodeBecameUnhealthy");
    expect(silentEvent).toBeDefined();
    const loss = (await lost()).find((e) => e.stream === byNode.get(waiting));
    expect(loss?.data).toMatchObject({ Message: `Execution lost: node ${waiting} became UNHEALTHY` });
    // The reason and the cause its step recorded before the restart: the queue was not found again by a sweep.
    expect(loss?.metadata).toMatchObject({
      actor: { type: "workflow", id: "node-reactions" },
      reason: `node ${waiting} became UNHEALTHY`,
      causationId: silentEvent?.id,
    });
    const records = all.filter((e) => e.stream === "workflow-node-reactions" && e.type !== "WorkflowStepRecorded");
    expect(records.map((e) => `${e.type} ${(e.data as Body).NodeID}`)).toEqual([
      `NodeLossReleased ${released}`,
      `NodeLossReleased ${waiting}`,
    ]);
  }, 300_000);
});

/** The desired state of an execution asked to stop (Bacalhau's ExecutionDesiredStateStopped). */
const STOPPED = 2;

describe("a restart after a node that came back was told to stop its lost work", () => {
  it("tells it nothing again when it comes back once more: what it was told is stored fact, not memory", async () => {
    expect(goneNodes).toHaveLength(2);
    const stopSteps = async (nodeId: string): Promise<number> =>
      (await storedEvents(cluster.dataDir)).filter(
        (e) =>
          e.stream === "workflow-node-reactions" &&
          e.type === "WorkflowStepRecorded" &&
          ((e.data as Body).Commands as Body[]).some((c) => c.Type === "StopLostWork" && c.EntityID === nodeId),
      ).length;
    const healthy = async (): Promise<boolean> => {
      const nodes = (await call("GET", "/api/v1/orchestrator/nodes?limit=100")).body.Nodes as Body[];
      return goneNodes.every((id) => nodes.find((n) => n.Info?.NodeID === id || n.NodeID === id)?.Health === "HEALTHY");
    };
    const sim = sims[1] as Simulation;

    // Back: each is told once to stop what was lost with it.
    expect(sim.fleet.revive().sort()).toEqual([...goneNodes].sort());
    await pass(3 * DISCONNECT_MS, async () => (await healthy()) && (await stopSteps(goneNodes[1] as string)) > 0);
    for (const id of goneNodes) expect(await stopSteps(id)).toBe(1);

    // Their work ends (the daemon job stops), so nothing more is lost when they die again.
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemonJobId}?reason=test%20over`)).status).toBe(200);
    const onGone = async (): Promise<Body[]> =>
      ((await call("GET", `/api/v1/orchestrator/jobs/${daemonJobId}/executions?limit=100`)).body?.Items ?? []).filter(
        (e: Body) => goneNodes.includes(e.NodeID as string),
      );
    let seen: Body[] = [];
    await waitFor(
      async () => (seen = await onGone()).every((e) => e.DesiredState?.StateType === STOPPED),
      60_000,
      () => `the executions on the revived nodes ended: ${JSON.stringify(seen)}`,
    );
    expect(sim.fleet.kill(1).sort()).toEqual([...goneNodes].sort());
    // Silent when the orchestrator stops: not back at the restart.
    const silent = async (): Promise<boolean> => {
      const nodes = (await call("GET", "/api/v1/orchestrator/nodes?limit=100")).body.Nodes as Body[];
      return goneNodes.every((id) => nodes.find((n) => n.Info?.NodeID === id || n.NodeID === id)?.Health !== "HEALTHY");
    };
    await pass(3 * DISCONNECT_MS, silent);
    expect(await silent()).toBe(true);
    await cluster.stopOrchestrator();

    await cluster.startOrchestrator();
    sim.fleet.revive();
    await pass(3 * DISCONNECT_MS, healthy);
    expect(await healthy()).toBe(true);
    // Time for the reactions to their return to be stored, were there any.
    await pass(3_000);
    for (const id of goneNodes) expect(await stopSteps(id)).toBe(1);
  }, 300_000);
});
