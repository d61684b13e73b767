import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import { executionKind } from "../../src/actors/execution-kind.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { EXECUTION_CATEGORY, categoryOf, entityIdOf } from "../../src/events/streams.ts";
import { holdsCapacity } from "../../src/scheduler/holds-capacity.ts";
import { SIM_RUN_ENV } from "../../src/sim/sim-executor.ts";
import { VirtualFleet } from "../../src/sim/virtual-fleet.ts";
import { virtualNodeCapacity } from "../../src/sim/virtual-node-info.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { settled } from "../support/job-waits.ts";
import { LocalServe } from "../support/local-serve.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * The concurrent job flow across a crash: a real `shoal serve` (its own nats-server, SQLite) killed with SIGKILL right
 * after the first executions of a batch of placements are stored, twice, and started again on the same files, with one
 * `shoal sim` node (in this process) that runs the work. Read afterwards from the store's own events: at no position
 * did the node's executions under way hold more than its capacity, no execution was created twice, every job ran once
 * and Completed, and the workflow's stream has each step once, though the restarts replayed steps.
 */
const NODE_INDEX = 0;
/** 500m each on the sim node's 2 CPUs: room for K at once. */
const CPU_MILLIS = 500;
const K = virtualNodeCapacity(NODE_INDEX).cpuMillis / CPU_MILLIS;
const N = 3 * K;
const serve = new LocalServe(tempDir("shoal-flow-restart-"), [
  "Orchestrator.NodeManager.MaxRegistrationsPerSecond=0",
  "Logging.Level=warn",
]);
const dbFile = join(serve.dataDir, "shoal.db");
let fleet: VirtualFleet | undefined;

const jobs = new JobApiClient(serve.url, serve.adminKey);
/** Reads that an orchestrator being restarted may not answer yet. */
const whileRestarting = { job: (jobId: string) => jobs.job(jobId).catch(() => ({})) };

const job = {
  Type: "batch",
  Constraints: [{ Key: "sim", Operator: "=", Values: ["true"] }],
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "busybox:sim", Entrypoint: ["sh", "-c"], Parameters: ["echo hi"] } },
      Resources: { CPU: `${CPU_MILLIS}m`, Memory: "16Mb" },
      // Long enough that the executions placed before a kill still run when the orchestrator is back.
      Env: { [SIM_RUN_ENV]: "2s" },
      // Queued, not failed, while the node is away or full.
      Timeouts: { QueueTimeout: 600 },
    },
  ],
};

/** What the store holds at one moment, read by another connection while the orchestrator writes. */
function storeReader() {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  const created = db.prepare<[], number>("SELECT count(*) FROM events WHERE type = 'ExecutionCreated'").pluck();
  const firstCreated = db
    .prepare<[], number | null>("SELECT min(position) FROM events WHERE type = 'ExecutionCreated'")
    .pluck();
  const checkpoint = db.prepare<[string], number>("SELECT position FROM checkpoints WHERE name = ?").pluck();
  return {
    created: () => created.get() ?? 0,
    firstCreated: () => firstCreated.get() ?? 0,
    checkpoint: (name: string) => checkpoint.get(name) ?? 0,
    close: () => db.close(),
  };
}

/**
 * SIGKILL the orchestrator the moment the store holds more than `after` ExecutionCreated (polled tightly): the rest of
 * that batch of placements, and the workflow's steps for them, are in flight. How many were stored when it died.
 */
async function killOnceCreated(after: number): Promise<number> {
  const reader = storeReader();
  try {
    await waitFor(
      () => reader.created() > after,
      60_000,
      () => `more than ${after} executions created`,
    );
    await serve.kill("SIGKILL");
    return reader.created();
  } finally {
    reader.close();
  }
}

afterAll(async () => {
  await fleet?.stop();
  await serve.stop();
});

/** The highest number of a node's executions holding capacity at once, at any position of the store. */
function mostHeldAtOnce(events: readonly RecordedEvent[]): Map<string, number> {
  const states = new Map<string, ExecutionState>();
  const held = new Map<string, Set<string>>();
  const most = new Map<string, number>();
  for (const e of events) {
    if (categoryOf(e.stream) !== EXECUTION_CATEGORY) continue;
    const id = entityIdOf(e.stream);
    const before = states.get(id) ?? executionKind.decider.initialState(id);
    const after = executionKind.decider.evolve(before, executionKind.decode(e), e.time);
    states.set(id, after);
    const onNode = held.get(after.nodeId) ?? new Set<string>();
    held.set(after.nodeId, onNode);
    if (holdsCapacity(after)) onNode.add(id);
    else onNode.delete(id);
    most.set(after.nodeId, Math.max(most.get(after.nodeId) ?? 0, onNode.size));
  }
  return most;
}

describe("the concurrent job flow across an orchestrator crash", () => {
  it("books no node twice, creates no execution twice, and completes every job, when killed mid-batch twice", async () => {
    await serve.start();
    // Submitted while no node can take them: all Queued, then placed at once when the node joins.
    const ids = await Promise.all(Array.from({ length: N }, () => jobs.submit(job)));
    for (const id of ids) await settled(jobs, id, ["Queued"], 30_000);

    fleet = new VirtualFleet({
      nodes: 1,
      idPrefix: "flow-restart",
      orchestrators: [serve.natsUrl],
      token: readFileSync(serve.joinTokenFile, "utf8").trim(),
      heartbeatMs: 500,
      jitterMs: 100,
      infoUpdateMs: 60_000,
      resourceUpdateMs: 1_000,
      joinRatePerSecond: 100,
      initialBackoffMs: 200,
      maxBackoffMs: 1_000,
      logger: pino({ level: "error" }, pino.destination(2)),
      dataDir: tempDir("shoal-flow-restart-sim-"),
      runWork: { runMs: 2_000 },
    });
    fleet.start();
    const nodeId = fleet.nodeId(NODE_INDEX);

    // 1: the node joined, the pass over the Queued jobs places K of them: killed right after the first Create.
    const storedAtFirstKill = await killOnceCreated(0);
    const reader = storeReader();
    const replayed = reader.checkpoint("workflow-jobs") < reader.firstCreated();
    reader.close();
    await serve.start();
    // 2: those executions complete, their settles and passes place the next ones: killed right after the first of them.
    const storedAtSecondKill = await killOnceCreated(K);
    await serve.start();

    for (const id of ids) {
      const got = await settled(whileRestarting, id, ["Completed", "Failed", "Stopped"], 90_000);
      expect(got.Job.State.StateType, `${id}: ${JSON.stringify(got.Job.State)}`).toBe("Completed");
    }
    await serve.kill("SIGTERM");
    await fleet.stop();
    fleet = undefined;

    const store = new SqliteEventStore(dbFile);
    const events = await store.readAll();
    await store.close();
    console.log(
      `K=${K} N=${N}: ${storedAtFirstKill} executions stored at the first kill, ${storedAtSecondKill} at the second; ` +
        `workflow checkpoint behind the first Create at the first kill: ${replayed}`,
    );
    // The first kill came before the workflow saved a checkpoint past the first Create: the restart replayed its step.
    expect(replayed).toBe(true);

    // From the store's events: never more under way on the node than it has room for, and it was full at some point.
    expect(mostHeldAtOnce(events)).toEqual(new Map([[nodeId, K]]));
    // Each execution created once, each job's one execution (none lost, none duplicated), completed.
    const created = events.filter((e) => e.type === "ExecutionCreated");
    const executionIds = created.map((e) => (e.data as { ExecutionID: string }).ExecutionID);
    expect(new Set(executionIds).size).toBe(executionIds.length);
    expect(created.map((e) => (e.data as { JobID: string }).JobID).sort()).toEqual([...ids].sort());
    expect(events.filter((e) => e.type === "ExecutionCompleted")).toHaveLength(N);
    expect(events.filter((e) => e.type === "JobCompleted")).toHaveLength(N);

    // The workflow's stream: each input's step once, and every placement's input and every Create has its step.
    const steps = events.filter((e) => e.stream === "workflow-jobs");
    const inputs = steps.map((e) => (e.data as { Input: { EventID: string } }).Input.EventID);
    expect(new Set(inputs).size).toBe(inputs.length);
    const stepped = new Set(inputs);
    for (const e of events.filter((x) => x.type === "JobSubmitted" || x.type === "ExecutionCreated"))
      expect(stepped.has(e.id), `${e.type} ${e.stream} has a step`).toBe(true);
  }, 300_000);
});
