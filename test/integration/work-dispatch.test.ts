import { randomUUID } from "node:crypto";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { ExecutionCommand } from "../../machines/execution/execution-commands.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { executionIdOf } from "../../machines/job/job-id.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { Listening } from "../../src/actors/listening.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { PlacementFleet } from "../../src/projections/placement-fleet.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import type { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import { DISPATCH } from "../../src/workflows/jobs/job-flow.ts";
import { JobRunner } from "../../src/workflows/jobs/job-runner.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { WorkDispatch } from "../../src/workflows/jobs/work-dispatch.ts";
import { RESEND_MS, type WorkResends } from "../../src/workflows/jobs/work-resends.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { listeningResends } from "../support/listening-resends.ts";
import { ManualClock, settle } from "../support/manual-clock.ts";
import { RecordingWorkClient } from "../support/recording-work-client.ts";

/**
 * WorkDispatch with no orchestrator booted: real job and execution registries on a real SQLite
 * file, the one DeadlineScheduler on a manual clock, and the transport boundary recorded
 * (RecordingWorkClient makes and validates each message as NodeWorkClient does). Time moves only
 * when a test advances the clock: every resend here is a deadline on it, none a real-time timer.
 */
const system = commandContext({ type: "system", id: "test" });
const node = commandContext({ type: "node", id: "node-a" });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Host {
  readonly clock: ManualClock;
  readonly control: JobControl;
  readonly deadlines: DeadlineScheduler;
  readonly work: RecordingWorkClient;
  readonly resends: WorkResends;
  readonly dispatch: WorkDispatch;
  readonly listening: Listening;
  readonly file: string;
  readonly store: SqliteEventStore;
  /** Log lines at warn and above. */
  readonly warnings: string[];
}

/** One orchestrator's worth of the parts dispatch uses, over `file` (a fresh one by default). */
function host(file = join(tempDir(), "shoal.db"), clock = new ManualClock(Date.parse("2026-11-28T12:00:00Z"))): Host {
  const store = new SqliteEventStore(file);
  const deadlines = new DeadlineScheduler(clock);
  const listening = Listening.begun(clock);
  const control = new JobControl({
    store,
    clock,
    logger: silentLogger,
    deadlines,
    defaults: BACALHAU_JOB_DEFAULTS,
    listening,
  });
  const work = new RecordingWorkClient(clock);
  const warnings: string[] = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
  );
  const resends = listeningResends({ deadlines, clock, logger, listening });
  const dispatch = new WorkDispatch({ jobs: control.jobs, executions: control.executions, work, resends, logger });
  cleanups.push(
    () => store.close(),
    () => deadlines.stop(),
    () => control.close(),
    () => resends.stop(),
    () => dispatch.stop(),
  );
  return { clock, control, deadlines, work, resends, dispatch, listening, file, store, warnings };
}

const spec = (type: "batch" | "ops") => ({
  Type: type,
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } } }],
});

/** A job of `type` and one execution of it on node-a: New, desired Pending (batch) or Running (ops, a direct bid). */
async function execution(
  h: Host,
  type: "batch" | "ops" = "batch",
  answerTimeoutMs?: number,
): Promise<{ jobId: string; executionId: string }> {
  const jobId = (await h.control.submit(spec(type), system)).jobId;
  const executionId = executionIdOf(randomUUID());
  const create: ExecutionCommand = {
    type: "Create",
    jobId,
    namespace: "default",
    nodeId: "node-a",
    jobType: type,
    jobVersion: 1,
    partitionIndex: 0,
    resources: { CPU: 0.1, Memory: 16_000_000, Disk: 0, GPU: 0 },
    executionTimeout: 0,
    timeoutBuffer: 0,
    ...(answerTimeoutMs !== undefined ? { answerTimeoutMs } : {}),
  };
  await h.control.executions.execute(executionId, create, system);
  return { jobId, executionId };
}

/** When each message of this type for the execution went, in ms after `t0`. */
const times = (h: Host, type: "AskForBid" | "RunExecution", executionId: string, t0: number) =>
  h.work.of(type, executionId).map((s) => s.at - t0);

describe("WorkDispatch", () => {
  it("sends a New batch execution's AskForBid at once and again every 2 s of the clock, not of real time", async () => {
    const h = host();
    const { executionId, jobId } = await execution(h);
    const t0 = h.clock.now();
    await h.dispatch.dispatch(executionId);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0]);
    const [first] = h.work.of("AskForBid", executionId);
    expect(first?.nodeId).toBe("node-a");
    expect(first?.message).toMatchObject({ NodeID: "node-a", JobID: jobId, Task: { Engine: { Type: "docker" } } });
    // Real time passes, the clock does not: nothing more is sent.
    await new Promise((r) => setTimeout(r, RESEND_MS + 300));
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0]);
    await h.clock.advance(RESEND_MS - 1);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0]);
    await h.clock.advance(1);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0, 2_000]);
    await h.clock.advance(6_000);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0, 2_000, 4_000, 6_000, 8_000]);
    expect(h.work.of("RunExecution", executionId)).toEqual([]);
  });

  it("stops once the node answers; an approved execution's RunExecution is then sent, and again, until it starts", async () => {
    const h = host();
    const { executionId } = await execution(h);
    const t0 = h.clock.now();
    await h.dispatch.dispatch(executionId);
    await h.clock.advance(3_000);
    await h.control.executions.execute(executionId, { type: "AcceptBid" }, node);
    // The node bid: nothing is due from it until the orchestrator approves (the chain ends at its next turn).
    await h.clock.advance(10_000);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0, 2_000]);
    expect(h.work.of("RunExecution", executionId)).toEqual([]);
    // Approved: the DISPATCH step for it sends the run.
    await h.control.executions.execute(executionId, { type: "Approve" }, system);
    const t1 = h.clock.now();
    await h.dispatch.dispatch(executionId);
    await h.clock.advance(4_000);
    expect(times(h, "RunExecution", executionId, t1)).toEqual([0, 2_000, 4_000]);
    // It starts: nothing more is due from it.
    await h.control.executions.execute(executionId, { type: "Start" }, node);
    await h.clock.advance(10_000);
    expect(times(h, "RunExecution", executionId, t1)).toEqual([0, 2_000, 4_000]);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0, 2_000]);
  });

  it("runs one chain per execution: a replayed step, a second DISPATCH and a resume start no second one", async () => {
    const h = host();
    const { executionId } = await execution(h, "ops");
    const t0 = h.clock.now();
    await h.dispatch.dispatch(executionId);
    await h.dispatch.dispatch(executionId);
    h.dispatch.resume([(await h.control.executions.get(executionId)).state]);
    await settle();
    await h.clock.advance(1_000);
    await h.dispatch.dispatch(executionId);
    await h.clock.advance(5_000);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([0, 2_000, 4_000, 6_000]);
    // Two executions: a chain each, on the one heap.
    const other = await execution(h, "ops");
    const t1 = h.clock.now();
    await h.dispatch.dispatch(other.executionId);
    await h.clock.advance(4_000);
    expect(times(h, "RunExecution", other.executionId, t1)).toEqual([0, 2_000, 4_000]);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([0, 2_000, 4_000, 6_000, 8_000, 10_000]);
  });

  it("ends the chain when the execution ends, when its job ends, and when the orchestrator stops", async () => {
    const h = host();
    const cancelled = await execution(h);
    const ofFailedJob = await execution(h);
    const atStop = await execution(h);
    const t0 = h.clock.now();
    for (const e of [cancelled, ofFailedJob, atStop]) await h.dispatch.dispatch(e.executionId);
    await h.clock.advance(2_000);
    await h.control.executions.execute(cancelled.executionId, { type: "Cancel", reason: "job stopped" }, system);
    await h.control.jobs.execute(ofFailedJob.jobId, { type: "Fail", reason: "broken" }, system);
    await h.clock.advance(4_000);
    expect(times(h, "AskForBid", cancelled.executionId, t0)).toEqual([0, 2_000]);
    expect(times(h, "AskForBid", ofFailedJob.executionId, t0)).toEqual([0, 2_000]);
    expect(times(h, "AskForBid", atStop.executionId, t0)).toEqual([0, 2_000, 4_000, 6_000]);
    h.dispatch.stop();
    await h.clock.advance(10_000);
    expect(times(h, "AskForBid", atStop.executionId, t0)).toEqual([0, 2_000, 4_000, 6_000]);
    // Stopped: nothing new is sent either.
    await h.dispatch.dispatch((await execution(h)).executionId);
    expect(h.work.sent).toHaveLength(8);
  });

  it("publishes nothing while the transport is down, goes on with the resends, and sends what it withheld at once when it is back", async () => {
    const h = host();
    const { executionId } = await execution(h, "ops");
    const t0 = h.clock.now();
    h.listening.transportDown("NATS connection lost");
    await h.dispatch.dispatch(executionId);
    await h.clock.advance(5_000);
    expect(h.work.sent).toEqual([]);
    h.listening.transportUp();
    await h.clock.advance(0);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([5_000]);
    // The chain goes on from there, every 2 s.
    await h.clock.advance(4_000);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([5_000, 7_000, 9_000]);
    // A short outage between two resends withheld nothing: the chain keeps its turn (no extra send when it is back).
    await h.clock.advance(500);
    h.listening.transportDown("NATS connection lost");
    await h.clock.advance(500);
    h.listening.transportUp();
    await h.clock.advance(999);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([5_000, 7_000, 9_000]);
    await h.clock.advance(1);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([5_000, 7_000, 9_000, 11_000]);
  });

  it("a node is judged unanswered only over a bound in which its work was published (sends withheld do not count)", async () => {
    const h = host();
    const BOUND_MS = 1_000;
    h.listening.transportDown("NATS connection lost");
    const { executionId } = await execution(h, "ops", BOUND_MS);
    const t0 = h.clock.now();
    await h.dispatch.dispatch(executionId);
    // Down for longer than the bound: the execution stands, nothing was published.
    await h.clock.advance(4_500);
    expect((await h.control.executions.get(executionId)).state.computeState).toBe("New");
    h.listening.transportUp();
    await h.clock.advance(BOUND_MS - 1);
    // Sent the moment the orchestrator hears again, a whole bound before it judges the node.
    expect(times(h, "RunExecution", executionId, t0)).toEqual([4_500]);
    expect((await h.control.executions.get(executionId)).state.computeState).toBe("New");
    await h.clock.advance(1);
    const ended = (await h.control.executions.get(executionId)).state;
    expect(ended.computeState).toBe("Failed");
    expect(ended.computeMessage).toBe("Execution unanswered: node node-a did not answer RunExecution within 1s");
    // Ended: no more sends.
    await h.clock.advance(10_000);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([4_500]);
  });

  it("a resend that fails to publish is logged and its chain goes on; a DISPATCH meanwhile starts no second one", async () => {
    const h = host();
    const { executionId } = await execution(h, "ops");
    const t0 = h.clock.now();
    await h.dispatch.dispatch(executionId);
    h.work.failNext = 1;
    await h.clock.advance(4_000);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([0, 4_000]);
    expect(h.warnings).toEqual(["sending RunExecution again failed"]);
    await h.dispatch.dispatch(executionId);
    await h.clock.advance(2_000);
    expect(times(h, "RunExecution", executionId, t0)).toEqual([0, 4_000, 6_000]);
  });

  it("after a restart, resume starts one chain for each execution its node may not hold yet, none for the others", async () => {
    const before = host();
    const waiting = await execution(before);
    const approved = await execution(before);
    const running = await execution(before, "ops");
    const ended = await execution(before);
    await before.control.executions.execute(approved.executionId, { type: "AcceptBid" }, node);
    await before.control.executions.execute(approved.executionId, { type: "Approve" }, system);
    await before.control.executions.execute(running.executionId, { type: "AcceptBid" }, node);
    await before.control.executions.execute(running.executionId, { type: "Start" }, node);
    await before.control.executions.execute(ended.executionId, { type: "Cancel", reason: "job stopped" }, system);
    await before.dispatch.dispatch(waiting.executionId);
    // The process dies: its chains die with it.
    for (const c of cleanups.splice(0).reverse()) await c();

    const after = host(before.file, new ManualClock(before.clock.now() + 60_000));
    const t0 = after.clock.now();
    const ids = [waiting, approved, running, ended].map((e) => e.executionId);
    const states = await Promise.all(ids.map(async (id) => (await after.control.executions.get(id)).state));
    after.dispatch.resume(states);
    after.dispatch.resume(states);
    await settle();
    await after.clock.advance(2_000);
    expect(times(after, "AskForBid", waiting.executionId, t0)).toEqual([0, 2_000]);
    expect(times(after, "RunExecution", approved.executionId, t0)).toEqual([0, 2_000]);
    expect(after.work.sent.map((s) => s.message.ExecutionID).sort()).toEqual(
      [waiting.executionId, waiting.executionId, approved.executionId, approved.executionId].sort(),
    );
  });

  it("is what JobRunner's DISPATCH step runs: its resends wait in the orchestrator's heap, on its clock", async () => {
    const h = host();
    h.dispatch.stop();
    const nodeViews = new NodeViews();
    const fleet = new PlacementFleet();
    const jobViews = new JobViews();
    const { clock, deadlines } = h;
    const processors = new ProcessorHost({ store: h.store, logger: silentLogger, clock, deadlines });
    const jobViewsProgress = processors.add({
      name: "job-views",
      handle: (batch) => {
        for (const e of batch) jobViews.handleEnvelope(e);
      },
    });
    await processors.start();
    cleanups.push(() => processors.stop());
    const runner = new JobRunner({
      jobs: h.control.jobs,
      executions: h.control.executions,
      jobViews,
      jobViewsProgress,
      nodeViews,
      fleet: () => fleet.view(nodeViews),
      work: h.work as unknown as NodeWorkClient,
      clock: h.clock,
      deadlines: h.deadlines,
      logger: silentLogger,
      resends: h.resends,
    });
    cleanups.push(() => runner.stop());
    const { executionId } = await execution(h);
    const t0 = h.clock.now();
    const step = { entityId: executionId, type: "ExecutionCreated", reason: "created", handler: DISPATCH };
    await runner.handlers()[DISPATCH]?.({ ...step, commandId: "c-1", causationId: "", correlationId: "" });
    await h.clock.advance(4_000);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0, 2_000, 4_000]);
    runner.stop();
    await h.clock.advance(4_000);
    expect(times(h, "AskForBid", executionId, t0)).toEqual([0, 2_000, 4_000]);
  });
});
