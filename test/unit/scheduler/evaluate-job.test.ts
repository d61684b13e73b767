import { describe, expect, it } from "vitest";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../../machines/job/job-defaults.ts";
import { taskOf, type JobSpec } from "../../../machines/job/job-spec.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import { parseTaskResources } from "../../../machines/job/task-resources.ts";
import { validateJobSubmission } from "../../../src/actors/job-submission/validate-job-submission.ts";
import { EMPTY_LEDGER, ledgerOf, placedOn, type CapacityLedger } from "../../../src/scheduler/capacity-ledger.ts";
import { evaluateJob, type JobEvaluation } from "../../../src/scheduler/evaluate-job.ts";
import { allocationOf } from "../../../src/scheduler/holds-capacity.ts";
import {
  DEFAULT_EXECUTION_RATE_LIMIT,
  STOPPED_FOR_JOB_UPDATE,
  outdatedStops,
  type ExecutionRateLimit,
} from "../../../src/scheduler/outdated-executions.ts";
import { JOB_FAILED_CANCEL, JOB_STOPPED_CANCEL, jobEndPlan } from "../../../src/scheduler/job-end-plan.ts";
import type { CandidateNode, PlacementRequest } from "../../../src/scheduler/placement-request.ts";
import { placementRequestOf } from "../../../src/scheduler/placement-request-of.ts";
import { fromBacalhauResources } from "../../../src/scheduler/resources.ts";
import { deterministicId } from "../../../src/events/store/deterministic-id.ts";
import { node } from "./scheduler-fixtures.ts";

/**
 * evaluateJob as a specification: given a job, its executions and the fleet, when it is evaluated at some instant,
 * then this plan. No orchestrator, no store: the plan is data.
 */
const JOB_ID = "j-00000000-0000-4000-8000-000000000001";
const CREATED = Date.parse("2026-11-28T10:00:00Z");

function specOf(type: string, extra: Record<string, unknown> = {}, timeouts: Record<string, number> = {}): JobSpec {
  const r = validateJobSubmission(
    {
      Type: type,
      Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } }, Timeouts: timeouts }],
      ...extra,
    },
    { jobId: JOB_ID, defaults: BACALHAU_JOB_DEFAULTS },
  );
  if (!r.ok) throw new Error(`fixture is invalid: ${JSON.stringify(r.problems)}`);
  return r.spec;
}

type Job = JobEvaluation["job"];
const jobOf = (spec: JobSpec, state: JobState["state"] = "Pending"): Job => ({
  jobId: JOB_ID,
  spec,
  state,
  version: 1,
  versionTime: CREATED,
});

function execution(id: string, nodeId: string, over: Partial<ExecutionState> = {}): ExecutionState {
  return {
    ...initialExecutionState(id),
    jobId: JOB_ID,
    nodeId,
    computeState: "Running",
    desiredState: "Running",
    createTime: CREATED,
    modifyTime: CREATED,
    ...over,
  };
}

const failed = (id: string, nodeId: string, message: string, over: Partial<ExecutionState> = {}) =>
  execution(id, nodeId, { computeState: "Failed", desiredState: "Stopped", computeMessage: message, ...over });

/** What JobRunner.requestFor builds from the job's actor state, the fleet and the clock. */
const requestOf =
  (job: Job, nodes: readonly CandidateNode[], now: number): JobEvaluation["requestFor"] =>
  (executions): PlacementRequest =>
    placementRequestOf(job, job.spec as JobSpec, executions, nodes, now);

function given(
  job: Job,
  over: {
    executions?: ExecutionState[];
    earlier?: ExecutionState[];
    rateLimit?: ExecutionRateLimit;
    ledger?: CapacityLedger;
    nodes?: CandidateNode[];
    leaving?: string[];
    refusal?: string;
  } = {},
) {
  return {
    whenEvaluatedAt(now = CREATED) {
      return evaluateJob({
        job,
        executions: over.executions ?? [],
        ...(over.earlier === undefined ? {} : { earlier: over.earlier }),
        ...(over.rateLimit === undefined ? {} : { rateLimit: over.rateLimit }),
        leaving: new Set(over.leaving ?? []),
        requestFor: requestOf(job, over.nodes ?? [], now),
        ledger: over.ledger ?? EMPTY_LEDGER,
        now,
        answerTimeoutMs: 30_000,
        ...(over.refusal === undefined ? {} : { refusal: over.refusal }),
      });
    },
  };
}

const nodes = (n: number) => Array.from({ length: n }, (_, i) => node(`n-${String(i).padStart(2, "0")}`));
const idOf = (key: string, attempt = 0) => `e-${deterministicId("placement", JOB_ID, key, String(attempt))}`;
const DEFAULT_RESOURCES = parseTaskResources(taskOf(specOf("batch")).Resources);

describe("evaluateJob: a first placement", () => {
  it("given a batch job of Count 3 and three nodes, then three executions, one per partition, every Create field set, and nothing asked of the job until a bid is approved", () => {
    const spec = specOf("batch", { Count: 3 }, { ExecutionTimeout: 30 });
    const plan = given(jobOf(spec), { nodes: nodes(3) }).whenEvaluatedAt();
    expect(plan.create).toEqual(
      [0, 1, 2].map((partition) => ({
        executionId: idOf(String(partition)),
        command: {
          type: "Create",
          jobId: JOB_ID,
          namespace: "default",
          nodeId: expect.stringMatching(/^n-0[0-2]$/),
          jobType: "batch",
          jobVersion: 1,
          partitionIndex: partition,
          resources: DEFAULT_RESOURCES,
          executionTimeout: 30,
          timeoutBuffer: 60,
          answerTimeoutMs: 30_000,
        },
      })),
    );
    expect(new Set(plan.create.map((c) => c.command.nodeId))).toEqual(new Set(["n-00", "n-01", "n-02"]));
    expect(plan.job).toEqual([]);
    expect(plan.cancel).toEqual([]);
    expect(plan.log).toEqual([
      {
        level: "info",
        fields: {
          jobId: JOB_ID,
          decision: "placed",
          placements: plan.create.map((c) => c.command.nodeId),
          deferred: 0,
        },
        message: "job placed",
      },
    ]);
    expect(plan.again).toBeUndefined();
    expect(plan.topUp).toBeUndefined();
    // The next placement sees the capacity these three hold.
    for (const n of ["n-00", "n-01", "n-02"])
      expect(placedOn(plan.ledger, n)).toEqual(fromBacalhauResources(DEFAULT_RESOURCES));
  });

  it("given a batch job placed on fewer nodes than its Count within its QueueTimeout, then what fits is placed, the job left as it is, and a top-up just past the QueueTimeout", () => {
    const spec = specOf("batch", { Count: 3 }, { QueueTimeout: 600 });
    const plan = given(jobOf(spec), { nodes: nodes(2) }).whenEvaluatedAt(CREATED + 5_000);
    expect(plan.create.map((c) => c.command.partitionIndex)).toEqual([0, 1]);
    expect(plan.job).toEqual([]);
    expect(plan.topUp).toEqual({
      at: CREATED + 600_000 + 1,
      reason: "the queue timeout of a job placed in part passed",
    });
    expect(plan.log[0]).toMatchObject({ level: "info", fields: { decision: "queued", deferred: 0 } });
  });

  it("given no node and a QueueTimeout not yet passed, then the job is Queued with Bacalhau's message, and nothing created", () => {
    const spec = specOf("batch", {}, { QueueTimeout: 600 });
    const plan = given(jobOf(spec)).whenEvaluatedAt(CREATED + 600_000);
    expect(plan.create).toEqual([]);
    expect(plan.job).toEqual([
      { type: "Queue", reason: "not enough nodes to run job. requested: 1, available: 0, suitable: 0.", wanted: 1 },
    ]);
    expect(plan.topUp).toBeUndefined();
  });

  it("given no node and the QueueTimeout passed, then the job fails with Bacalhau's message", () => {
    const spec = specOf("batch", {}, { QueueTimeout: 600 });
    const plan = given(jobOf(spec, "Queued")).whenEvaluatedAt(CREATED + 600_001);
    expect(plan.create).toEqual([]);
    expect(plan.job).toEqual([
      { type: "Fail", reason: "not enough nodes to run job. requested: 1, available: 0, suitable: 0." },
    ]);
  });

  it("given a daemon job and 25 nodes, then 20 executions now, the job Running, and the next evaluation 100 ms later for the other 5", () => {
    const spec = specOf("daemon");
    const now = CREATED + 1_234;
    const plan = given(jobOf(spec), { nodes: nodes(25) }).whenEvaluatedAt(now);
    expect(plan.create).toHaveLength(DEFAULT_EXECUTION_RATE_LIMIT.maxPerEval);
    for (const c of plan.create) {
      expect(c.executionId).toBe(idOf(c.command.nodeId));
      expect(c.command).toMatchObject({ jobType: "daemon", executionTimeout: 0, partitionIndex: 0 });
    }
    expect(plan.job).toEqual([{ type: "Run" }]);
    expect(plan.again).toEqual({
      at: now + DEFAULT_EXECUTION_RATE_LIMIT.backoffMs,
      reason: "5 more executions to place (at most 20 per evaluation)",
    });
    expect(plan.log[0]).toMatchObject({ fields: { decision: "placed", deferred: 5 } });
  });
});

describe("evaluateJob: a later version's timeouts count from its own start", () => {
  const UPDATED = CREATED + 3_600_000;
  const updated = (spec: JobSpec): Job => ({ ...jobOf(spec, "Pending"), version: 2, versionTime: UPDATED });

  it(
    "given a job created an hour ago and updated now, with no node and a QueueTimeout of 10 minutes, " +
      "then it is Queued, not failed",
    () => {
      const plan = given(updated(specOf("batch", {}, { QueueTimeout: 600 }))).whenEvaluatedAt(UPDATED + 5_000);
      expect(plan.job).toEqual([
        { type: "Queue", reason: "not enough nodes to run job. requested: 1, available: 0, suitable: 0.", wanted: 1 },
      ]);
    },
  );

  it(
    "given it placed in part, then its top-up comes just past the QueueTimeout from the update, not from " + "creation",
    () => {
      const spec = specOf("batch", { Count: 3 }, { QueueTimeout: 600 });
      const plan = given(updated(spec), { nodes: nodes(2) }).whenEvaluatedAt(UPDATED + 5_000);
      expect(plan.create).toHaveLength(2);
      expect(plan.topUp?.at).toBe(UPDATED + 600_000 + 1);
    },
  );

  it("given the QueueTimeout passed since the update, then it fails", () => {
    const plan = given(updated(specOf("batch", {}, { QueueTimeout: 600 }))).whenEvaluatedAt(UPDATED + 600_001);
    expect(plan.job).toEqual([
      { type: "Fail", reason: "not enough nodes to run job. requested: 1, available: 0, suitable: 0." },
    ]);
  });
});

describe("evaluateJob: after executions ended", () => {
  it("given a batch partition whose execution failed, then a retry on another node, naming the failure and the execution it replaces", () => {
    const spec = specOf("batch");
    const first = failed("e-first", "n-00", "the command exited with code 3", { partitionIndex: 0 });
    const plan = given(jobOf(spec, "Running"), { executions: [first], nodes: nodes(2) }).whenEvaluatedAt(CREATED + 9);
    expect(plan.create).toEqual([
      {
        executionId: idOf("0", 1),
        command: expect.objectContaining({ nodeId: "n-01", partitionIndex: 0, previousExecution: "e-first" }),
        reason: "retry of partition 0: execution e-first on node n-00 failed: the command exited with code 3",
      },
    ]);
    expect(plan.job).toEqual([]);
  });

  it("given a batch partition that failed and no node left, then the job fails with the shortfall and the last failure", () => {
    const spec = specOf("batch");
    const executions = [
      failed("e-1", "n-00", "boom", { modifyTime: CREATED + 1 }),
      failed("e-2", "n-00", "boom again", { modifyTime: CREATED + 2, createTime: CREATED + 1 }),
    ];
    const plan = given(jobOf(spec, "Running"), { executions, nodes: nodes(1) }).whenEvaluatedAt(CREATED + 9);
    expect(plan.create).toEqual([]);
    expect(plan.job).toEqual([
      {
        type: "Fail",
        reason:
          "not enough nodes to run job. requested: 1, available: 1, suitable: 0.\n" +
          "• Node n-00: job already executed on this node more than once\n" +
          "Last failure: execution e-2 on node n-00 failed: boom again",
      },
    ]);
  });

  it("given a batch job every partition of which completed, then it completes", () => {
    const spec = specOf("batch", { Count: 2 });
    const done = (id: string, p: number) =>
      execution(id, `n-0${p}`, { computeState: "Completed", desiredState: "Stopped", partitionIndex: p });
    const plan = given(jobOf(spec, "Running"), { executions: [done("e-0", 0), done("e-1", 1)] }).whenEvaluatedAt();
    expect(plan).toEqual({ create: [], cancel: [], job: [{ type: "Complete" }], log: [], ledger: EMPTY_LEDGER });
  });

  it("given an ops job whose executions all ended, none failed, then it completes; one failed, then it fails naming it", () => {
    const spec = specOf("ops");
    const ok = (id: string, n: string) => execution(id, n, { computeState: "Completed", desiredState: "Stopped" });
    const fleet = nodes(2);
    const completed = given(jobOf(spec, "Running"), {
      executions: [ok("e-0", "n-00"), ok("e-1", "n-01")],
      nodes: fleet,
    }).whenEvaluatedAt();
    expect(completed.create).toEqual([]);
    expect(completed.job).toEqual([{ type: "Complete" }]);
    // Nothing changed: the line is for debugging only.
    expect(completed.log).toMatchObject([{ level: "debug", message: "job placed" }]);

    const failing = given(jobOf(spec, "Running"), {
      executions: [ok("e-0", "n-00"), failed("e-1", "n-01", "execution e-1: the command exited with code 2")],
      nodes: fleet,
    }).whenEvaluatedAt();
    expect(failing.job).toEqual([
      {
        type: "Fail",
        reason:
          "Job failed because one or more executions failed: execution e-1 on node n-01 failed: the command exited with code 2",
      },
    ]);
  });

  it("given an ops job with an execution still under way, then it is left open", () => {
    const spec = specOf("ops");
    const plan = given(jobOf(spec, "Running"), {
      executions: [execution("e-0", "n-00"), failed("e-1", "n-01", "boom")],
      nodes: nodes(2),
    }).whenEvaluatedAt();
    expect(plan.job).toEqual([]);
  });
});

describe("evaluateJob: jobs it leaves alone", () => {
  it("given a spec today's limits refuse, then the job fails with the refusal and placement is never asked", () => {
    const spec = specOf("batch");
    const plan = evaluateJob({
      job: jobOf(spec),
      executions: [],
      leaving: new Set(),
      requestFor: () => {
        throw new Error("a refused job is never placed");
      },
      ledger: EMPTY_LEDGER,
      now: CREATED,
      refusal: "the job's CPU 500m is more than JobLimits allow (100m)",
    });
    expect(plan).toEqual({
      create: [],
      cancel: [],
      job: [{ type: "Fail", reason: "the job's CPU 500m is more than JobLimits allow (100m)" }],
      log: [],
      ledger: EMPTY_LEDGER,
    });
  });

  it.each(["Completed", "Failed", "Stopped"] as const)("given a job %s, then an empty plan", (state) => {
    const plan = given(jobOf(specOf("batch"), state), { nodes: nodes(3) }).whenEvaluatedAt();
    expect(plan).toEqual({ create: [], cancel: [], job: [], log: [], ledger: EMPTY_LEDGER });
  });
});

describe("evaluateJob: a service on a draining node", () => {
  const spec = specOf("service");
  const draining = node("n-drain", { unschedulable: "node is draining" });
  const original = execution("e-orig", "n-drain", { partitionIndex: 0, jobType: "service" });

  it("given its execution leaving a draining node and another node, then a replacement there, naming the original", () => {
    const plan = given(jobOf(spec, "Running"), {
      executions: [original],
      leaving: ["e-orig"],
      nodes: [node("n-00"), draining],
    }).whenEvaluatedAt();
    expect(plan.create).toEqual([
      {
        executionId: idOf("0", 1),
        command: expect.objectContaining({ nodeId: "n-00", partitionIndex: 0, previousExecution: "e-orig" }),
        reason: "replacement of partition 0: e-orig runs on node n-drain, which is draining",
      },
    ]);
    expect(plan.job).toEqual([]);
  });

  it("given no node for the replacement, then nothing: the job does not fail, the original runs on", () => {
    const plan = given(jobOf(spec, "Running"), {
      executions: [original],
      leaving: ["e-orig"],
      nodes: [draining],
    }).whenEvaluatedAt();
    expect(plan.create).toEqual([]);
    expect(plan.job).toEqual([]);
    expect(plan.topUp).toBeUndefined();
    expect(plan.log.map((l) => l.message)).toEqual([
      "job placed",
      "no node for a draining node's replacement yet: the original runs on",
    ]);
    expect(plan.log[1]?.fields).toEqual({
      jobId: JOB_ID,
      message:
        "not enough nodes to run job. requested: 1, available: 1, suitable: 0.\n" +
        "• Node n-drain: node is draining; job already has an execution on this node",
    });
  });

  it("given the same execution not leaving, then nothing is placed", () => {
    const plan = given(jobOf(spec, "Running"), { executions: [original], nodes: [node("n-00")] }).whenEvaluatedAt();
    expect(plan).toEqual({ create: [], cancel: [], job: [], log: [], ledger: EMPTY_LEDGER });
  });
});

describe("jobEndPlan: a job that ended", () => {
  const executions = [
    execution("e-run", "n-00"),
    execution("e-new", "n-01", { computeState: "New", desiredState: "Pending" }),
    execution("e-done", "n-02", { computeState: "Completed", desiredState: "Stopped" }),
  ];

  it("given a job stopped, then its executions under way are cancelled with Bacalhau's stop reason", () => {
    expect(jobEndPlan({ state: "Stopped" }, executions).cancel).toEqual([
      { executionId: "e-run", nodeId: "n-00", reason: JOB_STOPPED_CANCEL },
      { executionId: "e-new", nodeId: "n-01", reason: JOB_STOPPED_CANCEL },
    ]);
    expect(JOB_STOPPED_CANCEL).toBe("Execution stop requested because job has been stopped");
  });

  it("given a job failed, then they are cancelled with Bacalhau's failure reason, and nothing else is asked", () => {
    const plan = jobEndPlan({ state: "Failed" }, executions);
    expect(plan.cancel.map((c) => [c.executionId, c.reason])).toEqual([
      ["e-run", JOB_FAILED_CANCEL],
      ["e-new", JOB_FAILED_CANCEL],
    ]);
    expect(JOB_FAILED_CANCEL).toBe("Execution stopped due to job failure");
    expect(plan).toMatchObject({ create: [], job: [], log: [] });
  });
});

describe("outdatedStops: a later version replaces the earlier versions' executions at a bounded rate", () => {
  const limit = { maxPerEval: 1, backoffMs: 3_000 };
  const T = CREATED + 60_000;
  const v1 = (id: string, nodeId: string, over: Partial<ExecutionState> = {}) =>
    execution(id, nodeId, { jobVersion: 1, jobType: "daemon", ...over });
  const stoppedForUpdate = (id: string, nodeId: string, at: number) =>
    v1(id, nodeId, {
      computeState: "Cancelled",
      desiredState: "Stopped",
      desiredMessage: STOPPED_FOR_JOB_UPDATE,
      modifyTime: at,
    });

  it(
    "given version 2, a v1 execution not yet desired Running and three running ones, when evaluated, " +
      "then the first is stopped at once and only the running one changed first, the rest a backoff later",
    () => {
      const executions = [
        v1("e-b", "n-01", { modifyTime: CREATED + 2 }),
        v1("e-a", "n-00", { modifyTime: CREATED + 1 }),
        v1("e-c", "n-02", { modifyTime: CREATED + 3 }),
        v1("e-bid", "n-03", { computeState: "AskForBidAccepted", desiredState: "Pending", jobType: "service" }),
      ];
      const stops = outdatedStops({ version: 2 }, executions, limit, T);
      expect(stops.cancel).toEqual([
        { executionId: "e-bid", nodeId: "n-03", reason: "Execution stopped for job update" },
        { executionId: "e-a", nodeId: "n-00", reason: "Execution stopped for job update" },
      ]);
      expect(stops.stopped.map((e) => e.executionId)).toEqual(["e-bid", "e-a"]);
      expect(stops.remaining.map((e) => e.executionId)).toEqual(["e-b", "e-c"]);
      expect(stops.again).toEqual({
        at: T + 3_000,
        reason: "2 more executions of earlier versions to stop (at most 1 per evaluation)",
      });
    },
  );

  it(
    "given one stopped for the update less than a backoff ago, when evaluated again (an execution " +
      "ended), then nothing more is stopped until the backoff passed since that stop",
    () => {
      const executions = [stoppedForUpdate("e-a", "n-00", T), v1("e-b", "n-01"), v1("e-c", "n-02")];
      const early = outdatedStops({ version: 2 }, executions, limit, T + 2_999);
      expect(early.cancel).toEqual([]);
      expect(early.remaining.map((e) => e.executionId)).toEqual(["e-b", "e-c"]);
      expect(early.again?.at).toBe(T + 3_000);
      const due = outdatedStops({ version: 2 }, executions, limit, T + 3_000);
      expect(due.cancel.map((c) => c.executionId)).toEqual(["e-b"]);
      expect(due.again?.at).toBe(T + 6_000);
    },
  );

  it("given the last running one stopped, then nothing is left and no follow-up", () => {
    const executions = [stoppedForUpdate("e-a", "n-00", T), stoppedForUpdate("e-b", "n-01", T + 3_000)];
    expect(outdatedStops({ version: 2 }, [...executions, v1("e-c", "n-02")], limit, T + 6_000)).toMatchObject({
      cancel: [{ executionId: "e-c" }],
      remaining: [],
    });
    expect(outdatedStops({ version: 2 }, executions, limit, T + 9_000)).toEqual({
      cancel: [],
      stopped: [],
      remaining: [],
    });
  });

  it(
    "given no limit (MaxExecutionsPerEval 0), then every running one is stopped at once, whatever was " +
      "stopped before",
    () => {
      const executions = [stoppedForUpdate("e-a", "n-00", T), v1("e-b", "n-01"), v1("e-c", "n-02")];
      const stops = outdatedStops({ version: 2 }, executions, { maxPerEval: 0, backoffMs: 0 }, T + 1);
      expect(stops.cancel.map((c) => c.executionId)).toEqual(["e-b", "e-c"]);
      expect(stops.again).toBeUndefined();
    },
  );

  it("given the current version's executions, ended ones and ones never created, then none of them is touched", () => {
    const executions = [
      v1("e-v2", "n-00", { jobVersion: 2 }),
      v1("e-done", "n-01", { computeState: "Completed", desiredState: "Stopped" }),
      v1("e-failed", "n-02", { computeState: "Failed", desiredState: "Stopped" }),
      v1("e-none", "n-03", { computeState: undefined }),
    ];
    expect(outdatedStops({ version: 2 }, executions, limit, T)).toEqual({ cancel: [], stopped: [], remaining: [] });
  });
});

describe("evaluateJob: a job's update replaces its executions node by node", () => {
  const limit = { maxPerEval: 1, backoffMs: 3_000 };
  const T = CREATED + 60_000;
  // Each node is full with its v1 execution: a new one fits only where the old one stops.
  const full = { CPU: 2, Memory: 0, Disk: 0, GPU: 0 };
  const v1 = (id: string, nodeId: string, over: Partial<ExecutionState> = {}) =>
    execution(id, nodeId, { jobVersion: 1, allocatedResources: full, modifyTime: CREATED, ...over });
  const v2 = (spec: JobSpec): Job => ({ ...jobOf(spec, "Pending"), version: 2 });
  /** A service's two v1 replicas, partition 0's changed first. */
  const servicePair = () => [
    v1("e-p0", "n-00", { jobType: "service", partitionIndex: 0, modifyTime: CREATED + 1 }),
    v1("e-p1", "n-01", { jobType: "service", partitionIndex: 1, modifyTime: CREATED + 2 }),
  ];

  it(
    "given a daemon job at version 2 on three full nodes running v1, when evaluated with 1 per " +
      "evaluation, then one v1 execution is stopped and its node, and only it, gets the v2 execution in " +
      "the same plan",
    () => {
      const earlier = [
        v1("e-0", "n-00", { jobType: "daemon", modifyTime: CREATED + 1 }),
        v1("e-1", "n-01", { jobType: "daemon", modifyTime: CREATED + 2 }),
        v1("e-2", "n-02", { jobType: "daemon", modifyTime: CREATED + 3 }),
      ];
      const plan = given(v2(specOf("daemon")), {
        earlier,
        rateLimit: limit,
        ledger: ledgerOf(earlier.map(allocationOf)),
        nodes: nodes(3),
      }).whenEvaluatedAt(T);
      expect(plan.cancel).toEqual([{ executionId: "e-0", nodeId: "n-00", reason: STOPPED_FOR_JOB_UPDATE }]);
      expect(plan.create.map((c) => [c.command.nodeId, c.command.jobVersion])).toEqual([["n-00", 2]]);
      expect(plan.create[0]?.executionId).toBe(`e-${deterministicId("placement", JOB_ID, "n-00", "0", "v2")}`);
      expect(plan.job).toEqual([{ type: "Run" }]);
      expect(plan.again).toEqual({
        at: T + 3_000,
        reason: "2 more executions of earlier versions to stop (at most 1 per evaluation)",
      });
      expect(plan.log[0]).toMatchObject({
        fields: { stopped: ["e-0"], left: 2 },
        message: "executions of earlier versions stopped for the job's update",
      });
    },
  );

  it("given the next evaluation within the backoff (the stopped one ended), then nothing is stopped or created", () => {
    const earlier = [
      v1("e-0", "n-00", {
        jobType: "daemon",
        computeState: "Cancelled",
        desiredState: "Stopped",
        desiredMessage: STOPPED_FOR_JOB_UPDATE,
        modifyTime: T,
      }),
      v1("e-1", "n-01", { jobType: "daemon" }),
      v1("e-2", "n-02", { jobType: "daemon" }),
    ];
    const current = [execution("e-new", "n-00", { jobVersion: 2, jobType: "daemon" })];
    const plan = given(v2(specOf("daemon")), {
      executions: current,
      earlier,
      rateLimit: limit,
      nodes: nodes(3),
    }).whenEvaluatedAt(T + 500);
    expect(plan.cancel).toEqual([]);
    expect(plan.create).toEqual([]);
    expect(plan.again?.at).toBe(T + 3_000);
  });

  it(
    "given a service of Count 2 at version 2, then the partition whose v1 execution is stopped gets its " +
      "v2 execution, the other keeps its v1 one for now",
    () => {
      const earlier = servicePair();
      const plan = given(v2(specOf("service", { Count: 2 })), {
        earlier,
        rateLimit: limit,
        ledger: ledgerOf(earlier.map(allocationOf)),
        nodes: nodes(2),
      }).whenEvaluatedAt(T);
      expect(plan.cancel.map((c) => c.executionId)).toEqual(["e-p0"]);
      expect(plan.create.map((c) => [c.command.nodeId, c.command.partitionIndex, c.command.jobVersion])).toEqual([
        ["n-00", 0, 2],
      ]);
      expect(plan.job).toEqual([]);
    },
  );

  describe("a partition keeps its earlier execution while its new version has no node", () => {
    // The probe's case: Count 3, two partitions already on v2, the third's v1 execution on a node cordoned since.
    const service = v2(specOf("service", { Count: 3 }));
    const rolled = [
      execution("e-v2-0", "n-00", { jobVersion: 2, jobType: "service", partitionIndex: 0 }),
      execution("e-v2-1", "n-01", { jobVersion: 2, jobType: "service", partitionIndex: 1 }),
    ];
    const old = v1("e-p2", "n-02", { jobType: "service", partitionIndex: 2 });
    const fleet = (extra: CandidateNode[] = []) => [
      ...nodes(2),
      node("n-02", { cordoned: { reason: "maintenance" } }),
      ...extra,
    ];

    it(
      "given no node for partition 2's v2 execution, when evaluated, then its v1 execution is not " +
        "stopped, the job is neither failed nor queued, and it says it waits for room for version 2",
      () => {
        const plan = given(service, {
          executions: rolled,
          earlier: [old],
          rateLimit: limit,
          nodes: fleet(),
        }).whenEvaluatedAt(T);
        expect(plan.cancel).toEqual([]);
        expect(plan.create).toEqual([]);
        expect(plan.job).toEqual([
          { type: "HoldUpdate", reason: expect.stringContaining("node is cordoned (maintenance)") },
        ]);
        expect(plan.again).toBeUndefined();
        expect(plan.log.at(-1)).toMatchObject({
          message: "waiting for room for version 2: the earlier version's executions run on",
          fields: { version: 2, left: 1, message: expect.stringContaining("node is cordoned (maintenance)") },
        });
      },
    );

    it(
      "given a node joined since, when evaluated, then the v1 execution is stopped and its partition's " +
        "v2 execution placed on that node in the same plan",
      () => {
        const plan = given(service, {
          executions: rolled,
          earlier: [old],
          rateLimit: limit,
          nodes: fleet([node("n-03")]),
        }).whenEvaluatedAt(T);
        expect(plan.cancel).toEqual([{ executionId: "e-p2", nodeId: "n-02", reason: STOPPED_FOR_JOB_UPDATE }]);
        expect(plan.create.map((c) => [c.command.nodeId, c.command.partitionIndex, c.command.jobVersion])).toEqual([
          ["n-03", 2, 2],
        ]);
        expect(plan.job).toEqual([]);
        // Held before, the job is resumed by the same plan; a hold with an unchanged reason is asked again.
        const heldBefore = given(
          { ...service, heldReason: "not enough nodes" },
          { executions: rolled, earlier: [old], rateLimit: limit, nodes: fleet([node("n-03")]) },
        ).whenEvaluatedAt(T);
        expect(heldBefore.job).toEqual([{ type: "ResumeUpdate" }]);
        const stillShort = given(
          { ...service, heldReason: "not enough nodes" },
          { executions: rolled, earlier: [old], rateLimit: limit, nodes: fleet() },
        ).whenEvaluatedAt(T);
        expect(stillShort.job).toMatchObject([{ type: "HoldUpdate" }]);
      },
    );

    it(
      "given two to stop at once and room for one replacement only, then the older is stopped and " +
        "replaced, the other runs on and the job waits",
      () => {
        const earlier = servicePair();
        const plan = given(v2(specOf("service", { Count: 2 })), {
          earlier,
          rateLimit: { maxPerEval: 2, backoffMs: 3_000 },
          ledger: ledgerOf(earlier.map(allocationOf)),
          nodes: [node("n-00"), node("n-01", { cordoned: { reason: "maintenance" } })],
        }).whenEvaluatedAt(T);
        expect(plan.cancel.map((c) => c.executionId)).toEqual(["e-p0"]);
        expect(plan.create.map((c) => [c.command.nodeId, c.command.partitionIndex])).toEqual([["n-00", 0]]);
        expect(plan.job).toMatchObject([{ type: "HoldUpdate" }]);
        expect(plan.log.at(-1)?.message).toBe(
          "waiting for room for version 2: the earlier version's executions run on",
        );
      },
    );

    it(
      "given the one placement the limit allows taken by a failed v2 partition's retry, then the v1 " +
        "execution due to stop runs on and the next evaluation comes a backoff later",
      () => {
        const plan = given(v2(specOf("service", { Count: 2 })), {
          executions: [failed("e-v2-0", "n-00", "exit code 1", { jobVersion: 2, partitionIndex: 0 })],
          earlier: [v1("e-p1", "n-01", { jobType: "service", partitionIndex: 1 })],
          rateLimit: limit,
          nodes: nodes(3),
        }).whenEvaluatedAt(T);
        expect(plan.cancel).toEqual([]);
        expect(plan.create.map((c) => c.command.partitionIndex)).toEqual([0]);
        expect(plan.again?.at).toBe(T + 3_000);
        expect(plan.log.map((l) => l.message)).not.toContain(
          "waiting for room for version 2: the earlier version's executions run on",
        );
      },
    );

    it(
      "given a v2 partition that failed and finds no node while v1 executions run, then the job is not " +
        "failed (its v1 ones keep it up)",
      () => {
        const plan = given(service, {
          executions: [
            rolled[0] as ExecutionState,
            failed("e-v2-1", "n-01", "exit code 1", { jobVersion: 2, partitionIndex: 1 }),
          ],
          earlier: [old],
          rateLimit: limit,
          nodes: [node("n-00"), node("n-01", { cordoned: { reason: "maintenance" } }), fleet()[2] as CandidateNode],
        }).whenEvaluatedAt(T);
        expect(plan.job).toMatchObject([{ type: "HoldUpdate", reason: expect.stringContaining("Last failure") }]);
        expect(plan.cancel).toEqual([]);
      },
    );
  });

  it(
    "given an ops job whose current version's executions all ended while a v1 one waits for its turn, " +
      "then it is not judged until that one stopped",
    () => {
      const ended = [
        execution("e-done", "n-00", { jobVersion: 2, computeState: "Completed", desiredState: "Stopped" }),
      ];
      const stoppedAt = (at: number) =>
        v1("e-stopped", "n-01", {
          jobType: "ops",
          computeState: "Cancelled",
          desiredState: "Stopped",
          desiredMessage: STOPPED_FOR_JOB_UPDATE,
          modifyTime: at,
        });
      const evaluatedAt = (now: number) =>
        given(v2(specOf("ops")), {
          executions: ended,
          earlier: [stoppedAt(T), v1("e-waits", "n-00", { jobType: "ops" })],
          rateLimit: limit,
          nodes: nodes(1),
        }).whenEvaluatedAt(now);
      const waiting = evaluatedAt(T + 1);
      expect(waiting.cancel).toEqual([]);
      expect(waiting.job).toEqual([]);
      const last = evaluatedAt(T + 3_000);
      expect(last.cancel.map((c) => c.executionId)).toEqual(["e-waits"]);
      expect(last.job).toEqual([{ type: "Complete" }]);
    },
  );

  it(
    "given a batch job whose current version completed while v1 executions still run, then it completes " +
      "(its end stops them)",
    () => {
      const done = [execution("e-done", "n-00", { jobVersion: 2, computeState: "Completed", desiredState: "Stopped" })];
      const plan = given(v2(specOf("batch")), {
        executions: done,
        earlier: [v1("e-old", "n-01", { jobType: "batch" }), v1("e-older", "n-02", { jobType: "batch" })],
        rateLimit: limit,
        nodes: nodes(3),
      }).whenEvaluatedAt(T);
      expect(plan.job).toEqual([{ type: "Complete" }]);
      expect(plan.create).toEqual([]);
    },
  );
});
