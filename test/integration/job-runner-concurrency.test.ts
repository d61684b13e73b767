import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl, type Submitted } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventStore, NewEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { isTransientFailure } from "../../src/workflows/transient-failure.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import { PlacementFleet } from "../../src/projections/placement-fleet.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import type { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import { APPROVAL, PLACEMENT, SETTLE } from "../../src/workflows/jobs/job-flow.ts";
import { JobRunner } from "../../src/workflows/jobs/job-runner.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { registerNode } from "../support/register-node.ts";
import { RecordingWorkClient } from "../support/recording-work-client.ts";

/**
 * JobRunner with its commands handed over concurrently (as a workflow host that runs different jobs' steps at once
 * does), on real parts: a SQLite store, job and execution actors, a processor host's job-views lane. Two jobs never
 * take the same capacity, and one job's placement never waits for another job's appends or for the read model to
 * fold them.
 */
const submitter = commandContext({ type: "operator", id: "alice" });
const system = commandContext({ type: "system", id: "test" });
const node = commandContext({ type: "node", id: "n1" });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A batch job whose one execution takes `cpu` of a node's 4 CPUs, queued (not failed) while no node has room. */
const batchJob = (cpu: string) => ({
  Type: "batch",
  Count: 1,
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } },
      Resources: { CPU: cpu, Memory: "32Mb" },
      Timeouts: { QueueTimeout: 600 },
    },
  ],
});

const output = { Stdout: "", StdoutTruncated: false, stderr: "", StderrTruncated: false, ExitCode: 0, ErrorMsg: "" };

interface Options {
  /** The job-views lane waits for this before folding a batch holding such an event. */
  readonly holdFold?: { readonly matches: (e: EventEnvelope) => boolean; readonly until: Promise<void> };
  /** The actors' store (the lane reads the real one). */
  readonly actorStore?: EventStore;
}

/** One orchestrator's job runner over `store`, its job read model folded by its own lane. */
async function orchestrator(store: SqliteEventStore, clock: ManualClock, options: Options = {}) {
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({
    store: options.actorStore ?? store,
    clock,
    logger: silentLogger,
    deadlines,
    defaults: BACALHAU_JOB_DEFAULTS,
  });
  const fleet = new PlacementFleet();
  const nodeViews = new NodeViews((_id, _before, after) => fleet.changed(after));
  for (const e of await store.readAll()) nodeViews.handle(e);
  const jobViews = new JobViews();
  const processors = new ProcessorHost({ store, logger: silentLogger, clock, deadlines });
  const jobViewsProgress = processors.add({
    name: "job-views",
    handle: async (batch) => {
      const hold = options.holdFold;
      if (hold !== undefined && batch.some(hold.matches)) await hold.until;
      for (const e of batch) jobViews.handleEnvelope(e);
      runner.readModelFolded(batch);
    },
  });
  // The runner's view of the read model, counting its passes over every job.
  let passes = 0;
  const counted = new Proxy(jobViews, {
    get(target, property) {
      if (property === "allJobs") passes++;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const runner: JobRunner = new JobRunner({
    jobs: control.jobs,
    executions: control.executions,
    jobViews: counted,
    jobViewsProgress,
    nodeViews,
    fleet: () => fleet.view(nodeViews),
    work: new RecordingWorkClient(clock) as unknown as NodeWorkClient,
    clock,
    deadlines,
    logger: silentLogger,
  });
  await processors.start();
  cleanups.push(async () => {
    runner.stop();
    await processors.stop();
    control.close();
    deadlines.stop();
  });
  const handlers = runner.handlers();
  const step = (handler: string, type: string, entityId: string, position: number | undefined) =>
    handlers[handler]?.({
      handler,
      entityId,
      type,
      reason: "test",
      commandId: randomUUID(),
      causationId: randomUUID(),
      correlationId: randomUUID(),
      ...(position === undefined ? {} : { causationPosition: position }),
    }) ?? Promise.reject(new Error(`no handler ${handler}`));
  /** The read model has folded everything stored so far. */
  const synced = async () => {
    const all = await store.readAll();
    await jobViewsProgress.waitFor(all.at(-1)?.position ?? 0, 10_000);
  };
  return { control, jobViews, step, synced, passes: () => passes };
}

async function created(store: SqliteEventStore, jobId?: string) {
  return (await store.readAll())
    .filter(
      (e) => e.type === "ExecutionCreated" && (jobId === undefined || (e.data as { JobID: string }).JobID === jobId),
    )
    .map((e) => e.data as { NodeID: string; ExecutionID: string; JobID: string });
}

/** The store, but an append of an ExecutionCreated of a job `hold` names first waits for what it returns. */
function storeHolding(store: SqliteEventStore, hold: (jobId: string) => Promise<void> | undefined): EventStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "append")
        return async (stream: string, events: readonly NewEvent[], expected: Parameters<EventStore["append"]>[2]) => {
          for (const e of events) if (e.type === "ExecutionCreated") await hold((e.data as { JobID: string }).JobID);
          return target.append(stream, events, expected);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** How a promise stands after `ms` of real time: settled or still pending. */
async function within(p: Promise<unknown>, ms: number): Promise<"done" | "pending"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"pending">((resolve) => (timer = setTimeout(() => resolve("pending"), ms)));
  try {
    return await Promise.race([p.then(() => "done" as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("JobRunner with commands handed over concurrently", () => {
  it("never books a node's capacity twice: k of N jobs placed at once, the rest Queued and placed as those complete", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T08:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-concurrent-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    const o = await orchestrator(store, clock);
    // 2 CPUs each on a node of 4: room for k = 2.
    const k = 2;
    const jobs: Submitted[] = [];
    for (let i = 0; i < 6; i++) jobs.push(await o.control.submit(batchJob("2"), submitter));

    // Every PlaceJob started before any of them resolves.
    await Promise.all(jobs.map((j) => o.step(PLACEMENT, "PlaceJob", j.jobId, j.position)));
    await o.synced();
    /** How many jobs wait with no execution: each of them Queued (one placed stays Queued until its bid's approval). */
    const queued = async () => {
      const placed = new Set((await created(store)).map((e) => e.JobID));
      const waiting = jobs.filter((j) => !placed.has(j.jobId));
      for (const j of waiting) expect((await o.control.jobs.get(j.jobId)).state.state).toBe("Queued");
      return waiting.length;
    };
    expect((await created(store)).length).toBe(k);
    expect(await queued()).toBe(jobs.length - k);

    // Each round: the executions under way complete, and their settles and queue passes run at once, as the flow
    // reacts to each ExecutionCompleted.
    for (let round = 1; round < jobs.length / k; round++) {
      const running = o.jobViews.byNode.underWayOn("n1").map((e) => e.executionId);
      expect(running).toHaveLength(k);
      const ends: number[] = [];
      for (const id of running) {
        await o.control.executions.execute(id, { type: "AskForBid" }, system);
        const accepted = await o.control.executions.execute(id, { type: "AcceptBid" }, node);
        // The runner's approval: the execution approved, its job Running.
        await o.step(APPROVAL, "ApproveBids", id, accepted.position);
        await o.control.executions.execute(id, { type: "Start" }, node);
        ends.push((await o.control.executions.execute(id, { type: "Complete", output }, node)).position as number);
      }
      await Promise.all(
        running.flatMap((id, i) => [
          o.step(SETTLE, "SettleJob", id, ends[i]),
          o.step(PLACEMENT, "PlaceQueuedJobs", id, ends[i]),
        ]),
      );
      await o.synced();
      expect((await created(store)).length).toBe(k * (round + 1));
      expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(k);
      expect(await queued()).toBe(jobs.length - k * (round + 1));
    }
    // Every job got exactly one execution.
    for (const j of jobs) expect(await created(store, j.jobId)).toHaveLength(1);
  });

  it("places a job while the read model has not folded another job's Create", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T08:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-concurrent-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    let open = () => {};
    const until = new Promise<void>((resolve) => (open = resolve));
    let aJobId = "";
    const o = await orchestrator(store, clock, {
      holdFold: {
        matches: (e) =>
          e.recorded.type === "ExecutionCreated" && (e.recorded.data as { JobID: string }).JobID === aJobId,
        until,
      },
    });
    // Opened first, so the orchestrator can stop should an assertion fail.
    cleanups.push(() => open());
    const a = await o.control.submit(batchJob("1"), submitter);
    aJobId = a.jobId;
    const b = await o.control.submit(batchJob("1"), submitter);
    await o.synced();

    await o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    expect(await created(store, a.jobId)).toHaveLength(1);
    // The read model is held before A's Create: B's placement reads only B's own writes and its cause.
    const placeB = o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await within(placeB, 3_000)).toBe("done");
    expect(await created(store, b.jobId)).toHaveLength(1);
    expect(o.jobViews.execution((await created(store, a.jobId))[0]?.ExecutionID ?? "")).toBeUndefined();
    open();
    await o.synced();
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(2);
  });

  it("places a job while another job's Create is still being appended", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T08:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-concurrent-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    let open = () => {};
    const until = new Promise<void>((resolve) => (open = resolve));
    let aJobId = "";
    // The actors' store: an append of job A's execution waits for `until`, as a slow commit would.
    const actorStore = storeHolding(store, (jobId) => (jobId === aJobId ? until : undefined));
    const o = await orchestrator(store, clock, { actorStore });
    cleanups.push(() => open());
    const a = await o.control.submit(batchJob("3"), submitter);
    aJobId = a.jobId;
    const b = await o.control.submit(batchJob("1"), submitter);
    const c = await o.control.submit(batchJob("1"), submitter);
    await o.synced();

    const placeA = o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    const placeB = o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await within(placeB, 3_000)).toBe("done");
    expect(await created(store, b.jobId)).toHaveLength(1);
    expect(await created(store, a.jobId)).toHaveLength(0);
    // B took the room A left, and C finds none: A's 3 CPUs were reserved when A was planned, though its Create is not
    // stored yet.
    await o.step(PLACEMENT, "PlaceJob", c.jobId, c.position);
    expect(await created(store, c.jobId)).toHaveLength(0);
    expect((await o.control.jobs.get(c.jobId)).state.state).toBe("Queued");
    expect(await within(placeA, 100)).toBe("pending");
    open();
    await placeA;
    expect(await created(store, a.jobId)).toHaveLength(1);
    await o.synced();
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(2);
  });

  it("keeps the capacity of a Create the store answered Unavailable until its step is tried again, and counts it once then", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T08:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-concurrent-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    let failing = "";
    const actorStore = storeHolding(store, (jobId) =>
      jobId === failing ? Promise.reject(new StoreUnavailableError({ reason: "disk gone" })) : undefined,
    );
    const o = await orchestrator(store, clock, { actorStore });
    // 3 CPUs each on a node of 4: room for one of them.
    const a = await o.control.submit(batchJob("3"), submitter);
    const b = await o.control.submit(batchJob("3"), submitter);
    const c = await o.control.submit(batchJob("1"), submitter);
    await o.synced();

    failing = a.jobId;
    const err = await clock.drive(o.step(PLACEMENT, "PlaceJob", a.jobId, a.position)).catch((e: unknown) => e);
    expect(isTransientFailure(err)).toBe(true);
    expect(await created(store, a.jobId)).toHaveLength(0);
    failing = "";
    // Unavailable does not say the Create was not stored: A's reservation stays, B finds no room.
    await o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await created(store, b.jobId)).toHaveLength(0);
    expect((await o.control.jobs.get(b.jobId)).state.state).toBe("Queued");
    // A's step, tried again, creates A's execution in the room it kept.
    await o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    expect((await created(store, a.jobId)).map((e) => e.NodeID)).toEqual(["n1"]);
    await o.synced();
    // Counted once: the CPU A leaves takes C.
    await o.step(PLACEMENT, "PlaceJob", c.jobId, c.position);
    expect((await created(store, c.jobId)).map((e) => e.NodeID)).toEqual(["n1"]);
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(2);
  });

  it("never lets another job take the capacity of a Create stored though its answer was lost (Unavailable)", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T08:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-concurrent-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    let failing = "";
    let committed = false;
    // The first append of the failing job's Create commits and its answer is lost; the re-appends find the store gone.
    const actorStore = new Proxy(store, {
      get(target, property) {
        if (property === "append")
          return async (stream: string, events: readonly NewEvent[], expected: Parameters<EventStore["append"]>[2]) => {
            const ours = events.some(
              (e) => e.type === "ExecutionCreated" && (e.data as { JobID: string }).JobID === failing,
            );
            if (!ours) return target.append(stream, events, expected);
            if (!committed) {
              committed = true;
              await target.append(stream, events, expected);
            }
            throw new StoreUnavailableError({ reason: "the answer was lost" });
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    // The read model folds A's Create late, as a lagging lane would: after B's placement.
    let open = () => {};
    const until = new Promise<void>((resolve) => (open = resolve));
    let aJobId = "";
    const o = await orchestrator(store, clock, {
      actorStore,
      holdFold: {
        matches: (e) =>
          e.recorded.type === "ExecutionCreated" && (e.recorded.data as { JobID: string }).JobID === aJobId,
        until,
      },
    });
    cleanups.push(() => open());
    // 3 CPUs each on a node of 4: room for one of them.
    const a = await o.control.submit(batchJob("3"), submitter);
    aJobId = a.jobId;
    const b = await o.control.submit(batchJob("3"), submitter);
    await o.synced();

    failing = a.jobId;
    const err = await clock.drive(o.step(PLACEMENT, "PlaceJob", a.jobId, a.position)).catch((e: unknown) => e);
    expect(isTransientFailure(err)).toBe(true);
    // Stored after all.
    expect((await created(store, a.jobId)).map((e) => e.NodeID)).toEqual(["n1"]);
    failing = "";
    await o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await created(store, b.jobId)).toHaveLength(0);
    expect((await o.control.jobs.get(b.jobId)).state.state).toBe("Queued");
    // A's step tried again before the read model has A's execution: it finds the execution stored, a replay.
    await o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    expect((await o.control.jobs.get(a.jobId)).state.state).not.toBe("Failed");
    expect(await created(store, a.jobId)).toHaveLength(1);
    open();
    await o.synced();
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(1);
  });

  it("runs at most one more pass over the jobs however many executions end while one pass waits", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T08:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-concurrent-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    let open = () => {};
    const until = new Promise<void>((resolve) => (open = resolve));
    const o = await orchestrator(store, clock, {
      holdFold: { matches: (e) => e.recorded.type === "JobSubmitted", until },
    });
    cleanups.push(() => open());
    // The first pass waits for the read model to fold its cause (held), the requests after it join the next pass.
    const { position } = await o.control.submit(batchJob("1"), submitter);
    const first = o.step(PLACEMENT, "PlaceQueuedJobs", "e-0", position);
    // The first pass has started (it waits for the read model): the next requests cannot join it.
    await new Promise((resolve) => setImmediate(resolve));
    const more = Array.from({ length: 20 }, (_, i) => o.step(PLACEMENT, "PlaceQueuedJobs", `e-${i + 1}`, position));
    expect(await within(Promise.race([first, ...more]), 100)).toBe("pending");
    const before = o.passes();
    open();
    await Promise.all([first, ...more]);
    expect(o.passes() - before).toBe(2);
  });
});
