import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import { PlacementFleet } from "../../src/projections/placement-fleet.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { isTransientFailure } from "../../src/workflows/transient-failure.ts";
import type { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import { PLACEMENT } from "../../src/workflows/jobs/job-flow.ts";
import { JobRunner } from "../../src/workflows/jobs/job-runner.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { registerNode } from "../support/register-node.ts";
import { RecordingWorkClient } from "../support/recording-work-client.ts";

/**
 * JobRunner reads a job's executions and the capacity they hold from the job read model alone, on real parts (a
 * SQLite store, job and execution actors, a processor host's job-views lane): before it evaluates a job, the read
 * model has folded the step's cause and everything the runner appended, however far behind it starts.
 */
const submitter = commandContext({ type: "operator", id: "alice" });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An ops job whose one execution takes 3 of a node's 4 CPUs: a node holds one at a time. */
const opsJob = {
  Type: "ops",
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } },
      Resources: { CPU: "3", Memory: "32Mb" },
    },
  ],
};

/** One orchestrator's job runner over `store`: its job read model folded by its own lane, held at `gate` if given. */
async function orchestrator(store: SqliteEventStore, clock: ManualClock, gate?: Promise<void>) {
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS });
  const fleet = new PlacementFleet();
  const nodeViews = new NodeViews((_id, _before, after) => fleet.changed(after));
  for (const e of await store.readAll()) nodeViews.handle(e);
  const jobViews = new JobViews();
  const processors = new ProcessorHost({ store, logger: silentLogger, clock, deadlines });
  const folded: number[] = [];
  const jobViewsProgress = processors.add({
    name: "job-views",
    handle: async (batch) => {
      await gate;
      for (const e of batch) jobViews.handleEnvelope(e);
      runner.readModelFolded(batch);
      folded.push(...batch.map((e) => e.recorded.position));
    },
  });
  const runner: JobRunner = new JobRunner({
    jobs: control.jobs,
    executions: control.executions,
    jobViews,
    jobViewsProgress,
    nodeViews,
    fleet: () => fleet.view(nodeViews),
    work: new RecordingWorkClient(clock) as unknown as NodeWorkClient,
    clock,
    deadlines,
    logger: silentLogger,
  });
  await processors.start();
  const stop = async () => {
    runner.stop();
    await processors.stop();
    control.close();
    deadlines.stop();
  };
  cleanups.push(stop);
  /** The jobs workflow's step for a job's submission, as its host hands it over. */
  const placeSubmitted = (jobId: string, position: number | undefined) =>
    runner.handlers()[PLACEMENT]?.({
      handler: PLACEMENT,
      entityId: jobId,
      type: "PlaceJob",
      reason: "the job was submitted",
      commandId: randomUUID(),
      causationId: randomUUID(),
      correlationId: randomUUID(),
      ...(position === undefined ? {} : { causationPosition: position }),
    });
  return { control, jobViews, folded, placeSubmitted, stop, deadlines };
}

async function executionsOfJob(store: SqliteEventStore, jobId: string) {
  return (await store.readAll())
    .filter((e) => e.type === "ExecutionCreated" && (e.data as { JobID?: string }).JobID === jobId)
    .map((e) => e.data as { NodeID: string; ExecutionID: string });
}

describe("JobRunner over the job read model", () => {
  it("after a restart, places nothing on capacity an execution of the last run holds, with its read model behind", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T02:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-views-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");

    const first = await orchestrator(store, clock);
    const a = await first.control.submit(opsJob, submitter);
    await first.placeSubmitted(a.jobId, a.position);
    const placed = await executionsOfJob(store, a.jobId);
    expect(placed.map((e) => e.NodeID)).toEqual(["n1"]);
    await first.stop();

    // The next run's job read model starts from the beginning of the store and is held back: its placement step for
    // a job submitted since waits for it, rather than counting n1 free.
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const second = await orchestrator(store, clock, gate);
    // A failed assertion leaves the read model held: opened first, so the orchestrator can stop.
    cleanups.push(() => open());
    const b = await second.control.submit(opsJob, submitter);
    let done = false;
    const step = second.placeSubmitted(b.jobId, b.position)?.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(done).toBe(false);
    expect(await executionsOfJob(store, b.jobId)).toEqual([]);
    open();
    await step;
    expect(second.folded).toContain(b.position);
    expect(await executionsOfJob(store, b.jobId)).toEqual([]);
    expect(second.jobViews.byNode.underWayOn("n1").map((e) => e.executionId)).toEqual(placed.map((e) => e.ExecutionID));
  });

  it("whose read model does not catch up in time, tries the step again later and does not fail the job", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T02:00:00Z"));
    const store = new SqliteEventStore(join(tempDir("shoal-runner-views-"), "shoal.db"));
    cleanups.push(() => store.close());
    await registerNode(store, clock, "n1");
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const runner = await orchestrator(store, clock, gate);
    cleanups.push(() => open());
    const { jobId, position } = await runner.control.submit(opsJob, submitter);
    const step = runner.placeSubmitted(jobId, position);
    const failed = step?.then(
      () => undefined,
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await clock.advance(10_000);
    const err = await failed;
    expect(err).toMatchObject({ kind: "Unavailable" });
    expect(String((err as Error).message)).toContain("job read model");
    expect(isTransientFailure(err)).toBe(true);
    expect((await runner.control.jobs.get(jobId)).state.state).toBe("Pending");
    expect(await executionsOfJob(store, jobId)).toEqual([]);
  });
});
