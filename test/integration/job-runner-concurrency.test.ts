import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { Submitted } from "../../src/actors/job-control.ts";
import type { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventStore } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { isTransientFailure } from "../../src/workflows/transient-failure.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { APPROVAL, PLACEMENT, SETTLE } from "../../src/workflows/jobs/job-flow.ts";
import { executionsCreated, startJobRunner, storeWithNode } from "../support/job-runner-harness.ts";
import { overriding } from "../support/overriding.ts";

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

/** The store every test starts from: node n1 registered and approved. */
const oneNode = () => storeWithNode(cleanups, "shoal-runner-concurrent-", "2026-11-29T08:00:00Z");

const output = { Stdout: "", StdoutTruncated: false, stderr: "", StderrTruncated: false, ExitCode: 0, ErrorMsg: "" };

/** Whether `e` is an ExecutionCreated of the job `jobId` names when asked. */
const createOf = (jobId: () => string) => (e: EventEnvelope) =>
  e.recorded.type === "ExecutionCreated" && (e.recorded.data as { JobID: string }).JobID === jobId();

/** The store, but an append of an ExecutionCreated of a job `hold` names first waits for what it returns. */
function storeHolding(store: SqliteEventStore, hold: (jobId: string) => Promise<void> | undefined): EventStore {
  return overriding<EventStore>(store, {
    append: async (stream, events, expected) => {
      for (const e of events) if (e.type === "ExecutionCreated") await hold((e.data as { JobID: string }).JobID);
      return store.append(stream, events, expected);
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
    const { store, clock } = await oneNode();
    const o = await startJobRunner(store, clock, cleanups);
    // 2 CPUs each on a node of 4: room for k = 2.
    const k = 2;
    const jobs: Submitted[] = [];
    for (let i = 0; i < 6; i++) jobs.push(await o.control.submit(batchJob("2"), submitter));

    // Every PlaceJob started before any of them resolves.
    await Promise.all(jobs.map((j) => o.step(PLACEMENT, "PlaceJob", j.jobId, j.position)));
    await o.synced();
    /** How many jobs wait with no execution: each of them Queued (one placed stays Queued until its bid's approval). */
    const queued = async () => {
      const placed = new Set((await executionsCreated(store)).map((e) => e.JobID));
      const waiting = jobs.filter((j) => !placed.has(j.jobId));
      for (const j of waiting) expect((await o.control.jobs.get(j.jobId)).state.state).toBe("Queued");
      return waiting.length;
    };
    expect((await executionsCreated(store)).length).toBe(k);
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
      expect((await executionsCreated(store)).length).toBe(k * (round + 1));
      expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(k);
      expect(await queued()).toBe(jobs.length - k * (round + 1));
    }
    // Every job got exactly one execution.
    for (const j of jobs) expect(await executionsCreated(store, j.jobId)).toHaveLength(1);
  });

  it("places a job while the read model has not folded another job's Create", async () => {
    const { store, clock } = await oneNode();
    let aJobId = "";
    const o = await startJobRunner(store, clock, cleanups, { holdFold: createOf(() => aJobId) });
    const a = await o.control.submit(batchJob("1"), submitter);
    aJobId = a.jobId;
    const b = await o.control.submit(batchJob("1"), submitter);
    await o.synced();

    await o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    expect(await executionsCreated(store, a.jobId)).toHaveLength(1);
    // The read model is held before A's Create: B's placement reads only B's own writes and its cause.
    const placeB = o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await within(placeB, 3_000)).toBe("done");
    expect(await executionsCreated(store, b.jobId)).toHaveLength(1);
    expect(o.jobViews.execution((await executionsCreated(store, a.jobId))[0]?.ExecutionID ?? "")).toBeUndefined();
    o.openFold();
    await o.synced();
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(2);
  });

  it("places a job while another job's Create is still being appended", async () => {
    const { store, clock } = await oneNode();
    let open = () => {};
    const until = new Promise<void>((resolve) => (open = resolve));
    let aJobId = "";
    // The actors' store: an append of job A's execution waits for `until`, as a slow commit would.
    const actorStore = storeHolding(store, (jobId) => (jobId === aJobId ? until : undefined));
    const o = await startJobRunner(store, clock, cleanups, { actorStore });
    cleanups.push(() => open());
    const a = await o.control.submit(batchJob("3"), submitter);
    aJobId = a.jobId;
    const b = await o.control.submit(batchJob("1"), submitter);
    const c = await o.control.submit(batchJob("1"), submitter);
    await o.synced();

    const placeA = o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    const placeB = o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await within(placeB, 3_000)).toBe("done");
    expect(await executionsCreated(store, b.jobId)).toHaveLength(1);
    expect(await executionsCreated(store, a.jobId)).toHaveLength(0);
    // B took the room A left, and C finds none: A's 3 CPUs were reserved when A was planned, though its Create is not
    // stored yet.
    await o.step(PLACEMENT, "PlaceJob", c.jobId, c.position);
    expect(await executionsCreated(store, c.jobId)).toHaveLength(0);
    expect((await o.control.jobs.get(c.jobId)).state.state).toBe("Queued");
    expect(await within(placeA, 100)).toBe("pending");
    open();
    await placeA;
    expect(await executionsCreated(store, a.jobId)).toHaveLength(1);
    await o.synced();
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(2);
  });

  it("keeps the capacity of a Create the store answered Unavailable until its step is tried again, and counts it once then", async () => {
    const { store, clock } = await oneNode();
    let failing = "";
    const actorStore = storeHolding(store, (jobId) =>
      jobId === failing ? Promise.reject(new StoreUnavailableError({ reason: "disk gone" })) : undefined,
    );
    const o = await startJobRunner(store, clock, cleanups, { actorStore });
    // 3 CPUs each on a node of 4: room for one of them.
    const a = await o.control.submit(batchJob("3"), submitter);
    const b = await o.control.submit(batchJob("3"), submitter);
    const c = await o.control.submit(batchJob("1"), submitter);
    await o.synced();

    failing = a.jobId;
    const err = await clock.drive(o.step(PLACEMENT, "PlaceJob", a.jobId, a.position)).catch((e: unknown) => e);
    expect(isTransientFailure(err)).toBe(true);
    expect(await executionsCreated(store, a.jobId)).toHaveLength(0);
    failing = "";
    // Unavailable does not say the Create was not stored: A's reservation stays, B finds no room.
    await o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await executionsCreated(store, b.jobId)).toHaveLength(0);
    expect((await o.control.jobs.get(b.jobId)).state.state).toBe("Queued");
    // A's step, tried again, creates A's execution in the room it kept.
    await o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    expect((await executionsCreated(store, a.jobId)).map((e) => e.NodeID)).toEqual(["n1"]);
    await o.synced();
    // Counted once: the CPU A leaves takes C.
    await o.step(PLACEMENT, "PlaceJob", c.jobId, c.position);
    expect((await executionsCreated(store, c.jobId)).map((e) => e.NodeID)).toEqual(["n1"]);
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(2);
  });

  it("never lets another job take the capacity of a Create stored though its answer was lost (Unavailable)", async () => {
    const { store, clock } = await oneNode();
    let failing = "";
    let committed = false;
    // The first append of the failing job's Create commits and its answer is lost; the re-appends find the store gone.
    const actorStore = overriding<EventStore>(store, {
      append: async (stream, events, expected) => {
        const ours = events.some(
          (e) => e.type === "ExecutionCreated" && (e.data as { JobID: string }).JobID === failing,
        );
        if (!ours) return store.append(stream, events, expected);
        if (!committed) {
          committed = true;
          await store.append(stream, events, expected);
        }
        throw new StoreUnavailableError({ reason: "the answer was lost" });
      },
    });
    // The read model folds A's Create late, as a lagging lane would: after B's placement.
    let aJobId = "";
    const o = await startJobRunner(store, clock, cleanups, { actorStore, holdFold: createOf(() => aJobId) });
    // 3 CPUs each on a node of 4: room for one of them.
    const a = await o.control.submit(batchJob("3"), submitter);
    aJobId = a.jobId;
    const b = await o.control.submit(batchJob("3"), submitter);
    await o.synced();

    failing = a.jobId;
    const err = await clock.drive(o.step(PLACEMENT, "PlaceJob", a.jobId, a.position)).catch((e: unknown) => e);
    expect(isTransientFailure(err)).toBe(true);
    // Stored after all.
    expect((await executionsCreated(store, a.jobId)).map((e) => e.NodeID)).toEqual(["n1"]);
    failing = "";
    await o.step(PLACEMENT, "PlaceJob", b.jobId, b.position);
    expect(await executionsCreated(store, b.jobId)).toHaveLength(0);
    expect((await o.control.jobs.get(b.jobId)).state.state).toBe("Queued");
    // A's step tried again before the read model has A's execution: it finds the execution stored, a replay.
    await o.step(PLACEMENT, "PlaceJob", a.jobId, a.position);
    expect((await o.control.jobs.get(a.jobId)).state.state).not.toBe("Failed");
    expect(await executionsCreated(store, a.jobId)).toHaveLength(1);
    o.openFold();
    await o.synced();
    expect(o.jobViews.byNode.underWayOn("n1")).toHaveLength(1);
  });

  it("runs at most one more pass over the jobs however many executions end while one pass waits", async () => {
    const { store, clock } = await oneNode();
    const o = await startJobRunner(store, clock, cleanups, { holdFold: (e) => e.recorded.type === "JobSubmitted" });
    // The first pass waits for the read model to fold its cause (held), the requests after it join the next pass.
    const { position } = await o.control.submit(batchJob("1"), submitter);
    const first = o.step(PLACEMENT, "PlaceQueuedJobs", "e-0", position);
    // The first pass has started (it waits for the read model): the next requests cannot join it.
    await new Promise((resolve) => setImmediate(resolve));
    const more = Array.from({ length: 20 }, (_, i) => o.step(PLACEMENT, "PlaceQueuedJobs", `e-${i + 1}`, position));
    expect(await within(Promise.race([first, ...more]), 100)).toBe("pending");
    const before = o.passes();
    o.openFold();
    await Promise.all([first, ...more]);
    expect(o.passes() - before).toBe(2);
  });
});
