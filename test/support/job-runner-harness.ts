import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventStore } from "../../src/events/store/event-store.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import { PlacementFleet } from "../../src/projections/placement-fleet.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import type { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import { JobRunner } from "../../src/workflows/jobs/job-runner.ts";
import { WorkResends } from "../../src/workflows/jobs/work-resends.ts";
import { silentLogger, tempDir } from "./fixtures.ts";
import { ManualClock } from "./manual-clock.ts";
import { overriding } from "./overriding.ts";
import { RecordingWorkClient } from "./recording-work-client.ts";
import { registerNode } from "./register-node.ts";

/**
 * JobRunner with no orchestrator booted, on real parts: a SQLite store, job and execution actors, a processor host's
 * job-views lane folding the runner's read model, the node read model and placement fleet as of the store, and the
 * transport boundary recorded. The clock is the one fake.
 */

/** What a suite runs after each test, last pushed first. */
type Cleanups = (() => unknown)[];

/** A SQLite store in a fresh DataDir named after `dataDirPrefix`, holding one approved node n1, as of `at`. */
export async function storeWithNode(
  cleanups: Cleanups,
  dataDirPrefix: string,
  at: string,
): Promise<{ store: SqliteEventStore; clock: ManualClock }> {
  const clock = new ManualClock(Date.parse(at));
  const store = new SqliteEventStore(join(tempDir(dataDirPrefix), "shoal.db"));
  cleanups.push(() => store.close());
  await registerNode(store, clock, "n1");
  return { store, clock };
}

export interface JobRunnerHarnessOptions {
  /**
   * The job-views lane folds no batch holding such an event until the test calls `openFold`. The cleanups open it
   * before they stop the runner, so the runner can stop should an assertion fail.
   */
  readonly holdFold?: (e: EventEnvelope) => boolean;
  /** The actors' store (the lane reads the real one). */
  readonly actorStore?: EventStore;
}

/** One orchestrator's job runner over `store`, its job read model folded by its own lane; stopped by the cleanups. */
export async function startJobRunner(
  store: SqliteEventStore,
  clock: ManualClock,
  cleanups: Cleanups,
  options: JobRunnerHarnessOptions = {},
) {
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
  let openFold = () => {};
  const foldOpened = new Promise<void>((resolve) => (openFold = resolve));
  const processors = new ProcessorHost({ store, logger: silentLogger, clock, deadlines });
  const folded: number[] = [];
  const jobViewsProgress = processors.add({
    name: "job-views",
    handle: async (batch) => {
      if (options.holdFold !== undefined && batch.some(options.holdFold)) await foldOpened;
      for (const e of batch) jobViews.handleEnvelope(e);
      runner.readModelFolded(batch);
      folded.push(...batch.map((e) => e.recorded.position));
    },
  });
  // The runner's view of the read model, counting its passes over every job.
  let passes = 0;
  const counted = overriding(jobViews, {
    allJobs: () => {
      passes++;
      return jobViews.allJobs();
    },
  });
  const resends = new WorkResends({ deadlines, clock, logger: silentLogger });
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
    resends,
  });
  await processors.start();
  const stop = async () => {
    runner.stop();
    resends.stop();
    await processors.stop();
    control.close();
    deadlines.stop();
  };
  cleanups.push(stop);
  if (options.holdFold !== undefined) cleanups.push(() => openFold());
  const handlers = runner.handlers();
  /** The step a workflow host hands the runner: `handler`'s command `type` for `entityId`, caused at `position`. */
  const step = (handler: string, type: string, entityId: string, position: number | undefined, reason = "test") =>
    handlers[handler]?.({
      handler,
      entityId,
      type,
      reason,
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
  return { control, jobViews, step, synced, stop, openFold: () => openFold(), folded, passes: () => passes };
}

export type JobRunnerHarness = Awaited<ReturnType<typeof startJobRunner>>;

/** The executions stored as created (of `jobId`, else of every job), in store order. */
export async function executionsCreated(store: SqliteEventStore, jobId?: string) {
  return (await store.readAll())
    .filter(
      (e) => e.type === "ExecutionCreated" && (jobId === undefined || (e.data as { JobID: string }).JobID === jobId),
    )
    .map((e) => e.data as { NodeID: string; ExecutionID: string; JobID: string });
}
