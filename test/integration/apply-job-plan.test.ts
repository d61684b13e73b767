import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { taskOf, type JobSpec } from "../../machines/job/job-spec.ts";
import { parseTaskResources } from "../../machines/job/task-resources.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { EMPTY_LEDGER } from "../../src/scheduler/capacity-ledger.ts";
import { evaluateJob } from "../../src/scheduler/evaluate-job.ts";
import { jobEndPlan } from "../../src/scheduler/job-end-plan.ts";
import { EMPTY_PLAN } from "../../src/scheduler/job-plan.ts";
import type { CandidateNode, ExistingExecution } from "../../src/scheduler/placement-request.ts";
import { fromBacalhauResources } from "../../src/scheduler/resources.ts";
import { unpack } from "../../src/transport/codec.ts";
import { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import { executionWorkSubject } from "../../src/transport/subjects.ts";
import { applyJobPlan, followUpKey, type JobPlanStep } from "../../src/workflows/jobs/apply-job-plan.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { node } from "../unit/scheduler/scheduler-fixtures.ts";

/**
 * The applier of job plans on real parts: job and execution actors on a SQLite file, the one deadline scheduler on
 * a manual clock, the nodes' work subjects on a real nats-server.
 */
const START = Date.parse("2026-11-28T12:00:00Z");
const submitter = commandContext({ type: "operator", id: "alice" });
const nats = natsPerSuite();

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup() {
  const clock = new ManualClock(START);
  const store = new SqliteEventStore(join(tempDir("shoal-apply-plan-"), "shoal.db"));
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS });
  cleanups.push(
    () => store.close(),
    () => deadlines.stop(),
    () => control.close(),
  );
  const target = {
    jobs: control.jobs,
    executions: control.executions,
    work: new NodeWorkClient(nats.nc),
    deadlines,
    logger: silentLogger,
  };
  const wrote: (number | undefined)[] = [];
  const evaluations: string[] = [];
  const stepOf = (jobId: string): JobPlanStep => ({
    jobId,
    context: commandContext({ type: "workflow", id: "jobs" }, { reason: "the job was submitted" }),
    because: (reason) => commandContext({ type: "workflow", id: "jobs" }, { reason }),
    wrote: (position) => wrote.push(position),
    evaluateAgain: (reason) => {
      evaluations.push(reason);
      return Promise.resolve();
    },
  });
  /** A submitted job evaluated against these nodes, as JobRunner would. */
  const planFor = async (jobId: string, nodes: readonly CandidateNode[]) => {
    const job = (await control.jobs.get(jobId)).state;
    const spec = job.spec as JobSpec;
    const task = taskOf(spec);
    return evaluateJob({
      job,
      executions: [],
      leaving: new Set(),
      requestFor: (executions: readonly ExistingExecution[]) => ({
        jobId,
        type: spec.Type,
        count: spec.Count,
        constraints: [],
        engine: task.Engine.Type,
        resources: fromBacalhauResources(parseTaskResources(task.Resources)),
        executions,
        nodes,
        queue: { timeoutMs: 0, createdAtMs: job.versionTime, nowMs: clock.now() },
      }),
      ledger: EMPTY_LEDGER,
      now: clock.now(),
    });
  };
  return { clock, store, control, deadlines, target, wrote, evaluations, stepOf, planFor };
}

const job = (type: string, count = 1) => ({
  Type: type,
  Count: count,
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }],
});

const fleet = (n: number) => Array.from({ length: n }, (_, i) => node(`n-${String(i).padStart(2, "0")}`));

describe("applyJobPlan", () => {
  it("creates the plan's executions, then runs the job, reporting where each landed in the store; applied again (a replayed step) it creates nothing new", async () => {
    const { store, control, target, wrote, stepOf, planFor } = setup();
    const { jobId } = await control.submit(job("ops"), submitter);
    const plan = await planFor(jobId, fleet(3));
    expect(plan.create).toHaveLength(3);
    await applyJobPlan(target, plan, stepOf(jobId));
    // The read model is waited for up to these: each creation's event, then the job's.
    const stored = await store.readAll();
    const positionOf = (stream: string, type: string) =>
      stored.find((e) => e.stream === stream && e.type === type)?.position;
    expect(wrote).toEqual([
      ...plan.create.map((c) => positionOf(`execution-${c.executionId}`, "ExecutionCreated")),
      positionOf(`job-${jobId}`, "JobStarted"),
    ]);
    expect(Math.max(...wrote.map(Number))).toBe(stored.at(-1)?.position);
    for (const c of plan.create) {
      const state = (await control.executions.get(c.executionId)).state;
      expect(state).toMatchObject({ jobId, nodeId: c.command.nodeId, computeState: "New", desiredState: "Running" });
    }
    expect((await control.jobs.get(jobId)).state.state).toBe("Running");
    const before = (await store.readAll()).length;

    await applyJobPlan(target, { ...plan, job: [] }, stepOf(jobId));
    expect((await store.readAll()).length).toBe(before);
    expect(wrote).toHaveLength(plan.create.length + 1);
  });

  it("gives a retry's Create its own reason, and the rest the evaluation's", async () => {
    const { store, control, target, stepOf, planFor } = setup();
    const { jobId } = await control.submit(job("batch"), submitter);
    const plan = await planFor(jobId, fleet(1));
    const [first] = plan.create;
    const retry = { ...plan, create: [{ ...first!, reason: "retry of partition 0: it failed" }] };
    await applyJobPlan(target, retry, stepOf(jobId));
    const [createdEvent] = await store.readStream(`execution-${first!.executionId}`);
    expect(createdEvent?.metadata).toMatchObject({
      actor: { type: "workflow", id: "jobs" },
      reason: "retry of partition 0: it failed",
    });
  });

  it("arms a rate-limited job's next evaluation on the one deadline scheduler, at the plan's instant of the orchestrator's clock, once", async () => {
    const { clock, deadlines, control, target, evaluations, stepOf, planFor } = setup();
    const { jobId } = await control.submit(job("daemon"), submitter);
    const plan = await planFor(jobId, fleet(25));
    expect(plan.again).toEqual({ at: START + 100, reason: "5 more executions to place (at most 20 per evaluation)" });
    await applyJobPlan(target, plan, stepOf(jobId));
    expect(deadlines.at(followUpKey(jobId, "exec-limit"))).toBe(START + 100);
    // Another evaluation before it comes leaves it where it is.
    await clock.advance(50);
    await applyJobPlan(target, { ...EMPTY_PLAN, again: { at: START + 150, reason: "later" } }, stepOf(jobId));
    expect(deadlines.at(followUpKey(jobId, "exec-limit"))).toBe(START + 100);
    await clock.advance(49);
    expect(evaluations).toEqual([]);
    await clock.advance(1);
    expect(evaluations).toEqual(["5 more executions to place (at most 20 per evaluation)"]);
    expect(deadlines.has(followUpKey(jobId, "exec-limit"))).toBe(false);
  });

  it("arms a top-up at its instant, after the job's commands", async () => {
    const { clock, deadlines, control, target, evaluations, stepOf } = setup();
    const { jobId } = await control.submit(job("batch"), submitter);
    const at = START + 600_001;
    const reason = "the queue timeout of a job placed in part passed";
    // A job command refused (a job stopped meanwhile cannot run) stops the plan before its top-up.
    const other = (await control.submit(job("batch"), submitter)).jobId;
    await control.jobs.execute(other, { type: "Stop", reason: "enough" }, submitter);
    await expect(
      applyJobPlan(target, { ...EMPTY_PLAN, job: [{ type: "Run" }], topUp: { at, reason } }, stepOf(other)),
    ).rejects.toThrow();
    expect(deadlines.has(followUpKey(other, "top-up"))).toBe(false);
    expect(deadlines.has(followUpKey(jobId, "top-up"))).toBe(false);
    await applyJobPlan(target, { ...EMPTY_PLAN, topUp: { at, reason } }, stepOf(jobId));
    expect(deadlines.at(followUpKey(jobId, "top-up"))).toBe(at);
    await clock.advance(600_000);
    expect(evaluations).toEqual([]);
    await clock.advance(1);
    expect(evaluations).toEqual([reason]);
  });

  it("cancels the executions of a job that ended and tells each node to stop its own, with the reason", async () => {
    const { control, target, stepOf, planFor } = setup();
    const { jobId } = await control.submit(job("ops"), submitter);
    const nodes = fleet(2);
    const placed = await planFor(jobId, nodes);
    await applyJobPlan(target, placed, stepOf(jobId));
    const heard = nodes.map(async (n) => {
      for await (const m of nats.nc.subscribe(executionWorkSubject(n.id), { max: 1 })) return unpack(m.data);
      return undefined;
    });
    await nats.nc.flush();
    await control.jobs.execute(jobId, { type: "Stop", reason: "enough" }, submitter);
    const ended = (await control.jobs.get(jobId)).state;
    const executions = await Promise.all(
      placed.create.map(async (c) => (await control.executions.get(c.executionId)).state),
    );
    await applyJobPlan(target, jobEndPlan(ended, executions), stepOf(jobId));
    const reason = "Execution stop requested because job has been stopped";
    for (const c of placed.create) {
      expect((await control.executions.get(c.executionId)).state).toMatchObject({
        computeState: "Cancelled",
        computeMessage: reason,
        desiredState: "Stopped",
      });
    }
    const messages = await Promise.all(heard);
    expect(messages).toEqual(
      nodes.map((n) => {
        const executionId = placed.create.find((c) => c.command.nodeId === n.id)?.executionId;
        return expect.objectContaining({
          Type: "CancelExecution",
          NodeID: n.id,
          ExecutionID: executionId,
          Reason: reason,
        });
      }),
    );
  });
});
