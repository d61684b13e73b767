import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { EXECUTION_LABEL, NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";
import { testAgent } from "../support/test-agent.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, until as untilJob } from "../support/job-waits.ts";

/**
 * Work follows node state (docs/jobs.md, Node reactions), on real components: the orchestrator in
 * process with its own NATS and SQLite store, on a manual clock (health and the eviction rate are
 * about time), compute agents running executions in the real Docker engine on the real clock. A
 * node goes silent when its agent stops (its containers keep running, as after a partition) and
 * comes back when the agent starts again with the same id and DataDir.
 */
const KEY = "reactions-key-0123456789abcdefghijk";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const MIB = 1024 * 1024;
const DISCONNECT_MS = 10_000;
const docker = new Docker();
let image = "";
let orchestrator: RunningOrchestrator;
let config: ShoalConfig;
const clock = new ManualClock(Date.now());
/** The agents of the current test, by node id (stopped ones are absent). */
const agents = new Map<string, ComputeAgent>();
/** Every node a test started: id, DataDir, labels (to start it again). */
const nodes = new Map<string, { dataDir: string; labels: Record<string, string> }>();
let testNodes: string[] = [];

const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
const call = (method: string, path: string, body?: unknown) => api.call(method, path, body);

function spec(
  type: string,
  constraints: Record<string, string>,
  command: string,
  timeouts: Record<string, number> = {},
) {
  return {
    Type: type,
    Constraints: Object.entries(constraints).map(([Key, value]) => ({ Key, Operator: "=", Values: [value] })),
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
        Resources: { CPU: "100m", Memory: "16Mb" },
        Timeouts: timeouts,
      },
    ],
  };
}

const submit = (job: unknown) => api.submit(job);
const jobNow = (jobId: string) => api.job(jobId);
const until = (jobId: string, check: (job: Body) => boolean, what: string, timeoutMs?: number) =>
  untilJob(api, jobId, check, what, timeoutMs);

const RUNNING = 6;
const COMPLETED = 9;
const FAILED = 10;
const CANCELLED = 11;
const state = (e: Body | undefined): number | undefined => e?.ComputeState?.StateType;
const runningOn = (job: Body, nodeId: string) =>
  executionsOf(job).filter((e) => e.NodeID === nodeId && state(e) === RUNNING);

/**
 * A compute agent: 1 CPU, 256 MiB, these labels; started again with the same id and DataDir when it was started before.
 */
async function startNode(nodeId: string, labels?: Record<string, string>): Promise<string> {
  const known = nodes.get(nodeId);
  const node = {
    dataDir: known?.dataDir ?? tempDir(`shoal-reactions-${nodeId}-`),
    labels: labels ?? known?.labels ?? {},
  };
  nodes.set(nodeId, node);
  if (!testNodes.includes(nodeId)) testNodes.push(nodeId);
  const executor = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
  });
  const agent = testAgent({
    nodeId,
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    labels: node.labels,
    executor,
    resourceUpdateMs: 200,
    dataDir: node.dataDir,
  });
  agents.set(nodeId, agent);
  await agent.start();
  await waitFor(
    async () => (await health(nodeId)) === "HEALTHY",
    15_000,
    () => `node ${nodeId} joined, HEALTHY`,
  );
  return nodeId;
}

/** The node goes silent: its agent stops, its containers keep running. */
async function silence(nodeId: string): Promise<void> {
  await agents.get(nodeId)?.stop();
  agents.delete(nodeId);
}

/**
 * Moves the orchestrator's clock on by `ms` in steps, giving the live agents real time to
 * heartbeat between steps (their beats are recorded at the clock's time), so only silent nodes
 * are judged silent. `done` ends it early.
 */
async function pass(ms: number, stepMs = 1_000, done?: () => Promise<boolean>): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    await clock.advance(stepMs);
    await sleep(200);
    if (done && (await done())) return;
  }
}

const health = async (nodeId: string): Promise<string> =>
  (await call("GET", `/api/v1/orchestrator/nodes/${nodeId}`)).body?.Node?.Health as string;

/** The stored events of these executions, in store order. */
async function executionEvents(ids: readonly string[], type?: string): Promise<RecordedEvent[]> {
  const streams = new Set(ids.map((id) => `execution-${id}`));
  return (await storedEvents(config.DataDir)).filter(
    (e) => streams.has(e.stream) && (type === undefined || e.type === type),
  );
}

beforeAll(async () => {
  image = await dockerTestImage();
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-reactions-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.TLS.Disable": true, // TLS is not under test here
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "API.Auth.Users": USERS,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NodeManager.DisconnectTimeout": DISCONNECT_MS,
    "Orchestrator.NodeManager.UnknownTimeout": 3_600_000,
    // Only node gains and freed capacity place queued jobs again: a wake-up is the node's doing.
    "Orchestrator.Scheduler.QueueBackoff": 0,
  };
  orchestrator = await startOrchestrator(config, silentLogger, { clock });
  // The grace after a start (a full DisconnectTimeout) is over before any test silences a node.
  await clock.advance(DISCONNECT_MS);
}, 60_000);

afterEach(async () => {
  for (const agent of agents.values()) await agent.stop();
  agents.clear();
  // Nodes of a finished test leave the fleet: their silence must not count in the next test's.
  for (const nodeId of testNodes) {
    await orchestrator.manager
      .operatorAction("delete", nodeId, commandContext({ type: "operator", id: "test" }, { reason: "test over" }))
      .catch(() => undefined);
  }
  testNodes = [];
});

afterAll(async () => {
  await orchestrator?.stop();
  for (const nodeId of nodes.keys()) {
    for (const c of await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } }))
      await docker.getContainer(c.Id).remove({ force: true });
  }
});

describe("a node that goes silent", () => {
  it("loses its work: batch completes on another node, ops fails, daemon fails; back, it stops the lost containers and gets the daemon again", async () => {
    const suite = `silent-${randomUUID().slice(0, 6)}`;
    const [a, b] = [await startNode(`a-${suite}`, { suite }), await startNode(`b-${suite}`, { suite })];
    const batch = await submit(spec("batch", { suite }, "sleep 6; echo done"));
    const ops = await submit(spec("ops", { suite }, "sleep 10; echo ops"));
    const daemon = await submit(spec("daemon", { suite }, "sleep 600"));
    const placed = await until(batch, (j) => state(executionsOf(j)[0]) === RUNNING, "the batch running");
    const x = executionsOf(placed)[0]?.NodeID as string;
    const y = x === a ? b : a;
    await until(ops, (j) => runningOn(j, x).length === 1 && runningOn(j, y).length === 1, "ops running on both");
    await until(daemon, (j) => runningOn(j, x).length === 1 && runningOn(j, y).length === 1, "daemon running on both");
    const lost = [
      executionsOf(placed)[0]?.ID,
      runningOn(await jobNow(ops), x)[0]?.ID,
      runningOn(await jobNow(daemon), x)[0]?.ID,
    ] as string[];

    await silence(x);
    await pass(3 * DISCONNECT_MS, 1_000, async () => (await executionEvents(lost, "ExecutionFailed")).length === 3);
    expect(await health(x)).toBe("UNHEALTHY");
    expect(await health(y)).toBe("HEALTHY");

    // Every loss: failed by the workflow, naming the node and its state, caused by the node's event.
    const failures = await executionEvents(lost, "ExecutionFailed");
    expect(failures).toHaveLength(3);
    const nodeEvents = (await storedEvents(config.DataDir)).filter(
      (e) => e.stream === `node-${x}` && e.type === "NodeBecameUnhealthy",
    );
    expect(nodeEvents).toHaveLength(1);
    for (const f of failures) {
      expect(f.data).toMatchObject({ Cause: "Orchestrator", Message: `Execution lost: node ${x} became UNHEALTHY` });
      expect(f.metadata).toMatchObject({
        actor: { type: "workflow", id: "node-reactions" },
        reason: `node ${x} became UNHEALTHY`,
        causationId: nodeEvents[0]?.id,
      });
    }
    const steps = (await storedEvents(config.DataDir)).filter(
      (e) =>
        e.stream === "workflow-node-reactions" &&
        e.type === "WorkflowStepRecorded" &&
        (e.data as Body).Input.EventID === nodeEvents[0]?.id,
    );
    expect(steps.map((s) => (s.data as Body).Commands)).toEqual([
      [expect.objectContaining({ Type: "QueueNodeLoss", EntityID: x, Reason: `node ${x} became UNHEALTHY` })],
    ]);

    // Batch: a replacement on the other node, Count kept, the job completes.
    const done = await until(
      batch,
      (j) => ["Completed", "Failed"].includes(j.Job.State.StateType),
      "the batch ended",
      60_000,
    );
    expect(done.Job.State.StateType).toBe("Completed");
    expect(executionsOf(done).map((e) => [e.NodeID, state(e)])).toEqual([
      [x, FAILED],
      [y, COMPLETED],
    ]);
    expect(executionsOf(done)[1]).toMatchObject({ PreviousExecution: lost[0], RunOutput: { Stdout: "done\n" } });
    // Ops: not retried; the job fails once the other node's ends.
    const opsDone = await until(
      ops,
      (j) => ["Completed", "Failed"].includes(j.Job.State.StateType),
      "the ops job ended",
      60_000,
    );
    expect(opsDone.Job.State).toMatchObject({ StateType: "Failed" });
    expect(opsDone.Job.State.Message).toContain(`Execution lost: node ${x} became UNHEALTHY`);

    // Back: told to stop what was lost (its containers go), and the daemon comes back on it.
    await startNode(x);
    const back = await until(
      daemon,
      (j) => runningOn(j, x).length === 1,
      "the daemon running again on the node that came back",
      30_000,
    );
    expect(
      executionsOf(back)
        .filter((e) => e.NodeID === x)
        .map(state),
    ).toEqual([FAILED, RUNNING]);
    await waitFor(
      async () =>
        (
          await docker.listContainers({ all: true, filters: { label: lost.map((id) => `${EXECUTION_LABEL}=${id}`) } })
        ).filter((c) => c.State === "running").length === 0,
      30_000,
      () => "the lost executions' containers stopped",
    );
    // The lost ones were never resurrected.
    for (const id of lost)
      expect(
        state(
          executionsOf(await jobNow(batch))
            .concat(executionsOf(opsDone), executionsOf(back))
            .find((e) => e.ID === id),
        ),
      ).toBe(FAILED);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).status).toBe(200);
  }, 180_000);

  it("a queued job wakes when a node that fits recovers", async () => {
    const suite = `wake-${randomUUID().slice(0, 6)}`;
    const q = await startNode(`q-${suite}`, { suite });
    await silence(q);
    await pass(2 * DISCONNECT_MS, 1_000, async () => (await health(q)) === "UNHEALTHY");
    expect(await health(q)).toBe("UNHEALTHY");
    const job = await submit(spec("batch", { suite }, "echo woke", { QueueTimeout: 3600 }));
    await until(job, (j) => j.Job.State.StateType === "Queued", "queued: its only node is UNHEALTHY");
    await startNode(q);
    const done = await until(job, (j) => j.Job.State.StateType === "Completed", "completed on the node that recovered");
    expect(executionsOf(done).map((e) => [e.NodeID, state(e)])).toEqual([[q, COMPLETED]]);
  }, 90_000);
});

describe("daemon jobs follow labels", () => {
  it("a node whose labels stop matching loses its daemon execution, naming the change; matching again, it gets a new one", async () => {
    const suite = `labels-${randomUUID().slice(0, 6)}`;
    const n = await startNode(`l-${suite}`, { suite, role: "edge" });
    const daemon = await submit(spec("daemon", { suite, role: "edge" }, "sleep 600"));
    const first = (await until(daemon, (j) => runningOn(j, n).length === 1, "running on the matching node")).Executions
      .Items[0] as Body;
    await silence(n);
    await startNode(n, { suite, role: "core" });
    const stopped = await until(
      daemon,
      (j) => state(executionsOf(j).find((e) => e.ID === first.ID)) === CANCELLED,
      "cancelled as the node stopped matching",
      30_000,
    );
    const gone = executionsOf(stopped).find((e) => e.ID === first.ID) as Body;
    expect(gone.ComputeState.Message).toBe(
      `Execution stopped: node ${n} no longer matches the job's constraints (role = edge: role is now core)`,
    );
    const cancelled = await executionEvents([first.ID as string], "ExecutionCancelled");
    expect(cancelled[0]?.metadata).toMatchObject({
      actor: { type: "workflow", id: "node-reactions" },
      reason: `node ${n}'s labels changed`,
    });
    await waitFor(
      async () =>
        (await docker.listContainers({ filters: { label: [`${EXECUTION_LABEL}=${first.ID as string}`] } })).length ===
        0,
      30_000,
      () => "its container stopped",
    );
    // Its labels change back: a node that newly matches gets an execution.
    await silence(n);
    await startNode(n, { suite, role: "edge" });
    const again = await until(
      daemon,
      (j) => runningOn(j, n).length === 1,
      "running again once the node matches again",
      30_000,
    );
    expect(executionsOf(again).map(state)).toEqual([CANCELLED, RUNNING]);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).status).toBe(200);
  }, 120_000);

  it("an operator's labels drive daemon matching as the node's own do: set, its daemon execution comes; removed, it goes", async () => {
    const suite = `oplabels-${randomUUID().slice(0, 6)}`;
    const n = await startNode(`o-${suite}`, { suite });
    const daemon = await submit(spec("daemon", { suite, role: "edge" }, "sleep 600"));
    const label = (body: Record<string, unknown>) =>
      call("PUT", `/api/v1/orchestrator/nodes/${n}`, { Action: "label", Message: "edge duty", ...body });
    expect((await label({ Labels: { role: "edge" } })).status).toBe(200);
    const first = (
      await until(daemon, (j) => runningOn(j, n).length === 1, "running once the operator's label matches", 30_000)
    ).Executions.Items[0] as Body;
    expect((await label({ RemoveLabels: ["role"] })).status).toBe(200);
    const stopped = await until(
      daemon,
      (j) => state(executionsOf(j).find((e) => e.ID === first.ID)) === CANCELLED,
      "cancelled once the label is gone",
      30_000,
    );
    expect((executionsOf(stopped).find((e) => e.ID === first.ID) as Body).ComputeState.Message).toMatch(
      new RegExp(`^Execution stopped: node ${n} no longer matches the job's constraints \\(role = edge`),
    );
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).status).toBe(200);
  }, 120_000);
});

describe("mass silence is rate-limited", () => {
  it("two silent nodes lose their work one eviction interval (10 s of the clock) apart; four of six silent lose no more, and come back with it", async () => {
    const suite = `partition-${randomUUID().slice(0, 6)}`;
    const fleet: string[] = [];
    for (let i = 0; i < 6; i++) fleet.push(await startNode(`p${i}-${suite}`, { suite }));
    const daemon = await submit(spec("daemon", { suite }, "sleep 600"));
    await until(
      daemon,
      (j) => fleet.every((id) => runningOn(j, id).length === 1),
      "a daemon execution on each of the six",
      60_000,
    );
    const executionOn = async (id: string) => runningOn(await jobNow(daemon), id)[0]?.ID as string;

    // Two silent of six: the fleet stays "normal", one node's work at once, the next 10 s later.
    const pair = [fleet[0], fleet[1]] as string[];
    const pairExecutions = await Promise.all(pair.map(executionOn));
    for (const id of pair) await silence(id);
    await pass(
      5 * DISCONNECT_MS,
      1_000,
      async () => (await executionEvents(pairExecutions, "ExecutionFailed")).length === 2,
    );
    const pairLost = await executionEvents(pairExecutions, "ExecutionFailed");
    expect(pairLost).toHaveLength(2);
    const [t1, t2] = pairLost.map((e) => Date.parse(e.time)) as [number, number];
    expect(t2 - t1).toBeGreaterThanOrEqual(10_000);
    for (const e of pairLost) expect(e.metadata).toMatchObject({ actor: { type: "workflow", id: "node-reactions" } });
    // Both back: each gets the daemon again.
    for (const id of pair) await startNode(id);
    await until(
      daemon,
      (j) => fleet.every((id) => runningOn(j, id).length === 1),
      "the daemon on all six again",
      60_000,
    );

    // Four silent of six (more than two, 0.67 ≥ 0.55, a fleet of at most 50): work moves for the
    // first at most (while the share was still small), then pauses for as long as they are away.
    const cut = fleet.slice(2);
    const cutExecutions = await Promise.all(cut.map(executionOn));
    for (const id of cut) await silence(id);
    await pass(12 * DISCONNECT_MS, 2_000);
    for (const id of cut) expect(await health(id)).toBe("UNHEALTHY");
    const cutLost = await executionEvents(cutExecutions, "ExecutionFailed");
    expect(cutLost.length).toBeLessThanOrEqual(1);
    // The partition heals: the nodes whose work waited still run it, never lost.
    for (const id of cut) await startNode(id);
    await pass(3 * DISCONNECT_MS, 2_000);
    expect(await executionEvents(cutExecutions, "ExecutionFailed")).toHaveLength(cutLost.length);
    const healed = await until(
      daemon,
      (j) => fleet.every((id) => runningOn(j, id).length === 1),
      "the daemon on all six again",
      60_000,
    );
    const kept = cutExecutions.filter((id) => !cutLost.some((e) => e.stream === `execution-${id}`));
    for (const id of kept) expect(state(executionsOf(healed).find((e) => e.ID === id))).toBe(RUNNING);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).status).toBe(200);
  }, 300_000);
});

describe("a restart", () => {
  it("never acts twice: the steps replayed after it store nothing new and lose nothing more", async () => {
    const suite = `restart-${randomUUID().slice(0, 6)}`;
    const [a, b] = [await startNode(`a-${suite}`, { suite }), await startNode(`b-${suite}`, { suite })];
    const daemon = await submit(spec("daemon", { suite }, "sleep 600"));
    await until(daemon, (j) => runningOn(j, a).length === 1 && runningOn(j, b).length === 1, "running on both");
    const lost = runningOn(await jobNow(daemon), a)[0]?.ID as string;
    await silence(a);
    await pass(3 * DISCONNECT_MS, 1_000, async () => (await executionEvents([lost], "ExecutionFailed")).length === 1);
    const before = await storedEvents(config.DataDir);
    const count = (events: RecordedEvent[]) => ({
      steps: events.filter((e) => e.stream === "workflow-node-reactions").length,
      executionEvents: events.filter((e) => e.stream.startsWith("execution-")).length,
    });
    // The workflow's checkpoint put back to the start of the store: the restart replays every node event it ever
    // reacted to.
    await orchestrator.stop();
    const store = new SqliteEventStore(join(config.DataDir, "shoal.db"));
    try {
      expect(await store.load("workflow-node-reactions")).toBeGreaterThan(0);
      await store.save("workflow-node-reactions", 0);
    } finally {
      await store.close();
    }
    orchestrator = await startOrchestrator(config, silentLogger, { clock });
    await waitFor(
      async () => (await health(b)) === "HEALTHY",
      30_000,
      () => "the live node heartbeating the new orchestrator",
    );
    // Past the grace after the start: the silent node, still UNHEALTHY, is found again by the sweep, and has nothing
    // left to lose.
    await pass(2 * DISCONNECT_MS, 1_000);
    const after = await storedEvents(config.DataDir);
    expect(count(after)).toEqual(count(before));
    expect(await executionEvents([lost], "ExecutionFailed")).toHaveLength(1);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).status).toBe(200);
  }, 120_000);
});
