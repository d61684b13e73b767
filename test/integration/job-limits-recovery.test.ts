import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { DEFAULT_JOB_LIMITS } from "../../machines/job/job-limits.ts";
import { executionIdOf } from "../../machines/job/job-id.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { defaultConfig } from "../../src/config/keys.ts";
import { StartupError } from "../../src/errors/startup-error.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { jobDefaultsOf } from "../../src/orchestrator/job-defaults-config.ts";
import { jobLimitsOf } from "../../src/orchestrator/job-limits-config.ts";
import { ProtocolError } from "../../src/transport/codec.ts";
import { failRefusedJobs } from "../../src/workflows/jobs/refused-jobs.ts";
import { sendOrEnd } from "../../src/workflows/jobs/unsendable-work.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";

/**
 * A job's trouble ends that job, with the reason, on a real SQLite store: one stored under looser
 * limits fails at start; work the protocol refuses to carry fails its execution and its job.
 */
const operator = commandContext({ type: "operator", id: "alice" });
const spec = (over: Record<string, unknown> = {}) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } } }],
  ...over,
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function control(store: SqliteEventStore, limits = DEFAULT_JOB_LIMITS): JobControl {
  const clock = new ManualClock(Date.parse("2026-11-28T12:00:00Z"));
  const deadlines = new DeadlineScheduler(clock);
  const c = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS, limits });
  cleanups.push(() => c.close());
  return c;
}

function openStore(file = join(tempDir(), "shoal.db")): SqliteEventStore {
  const store = new SqliteEventStore(file);
  cleanups.push(() => store.close());
  return store;
}

describe("a stored job that today's limits refuse", () => {
  it("fails at start with a JobFailed naming the limit; the jobs within them are left as they are", async () => {
    const store = openStore();
    // Stored when Count was limited only by an operator's looser config.
    const before = control(store, { ...DEFAULT_JOB_LIMITS, MaxCount: 1_000_000_000 });
    const big = (await before.submit(spec({ Count: 1_000_000_000 }), operator)).jobId;
    const fine = (await before.submit(spec({ Count: 2 }), operator)).jobId;
    await before.close();

    const now = control(store);
    const jobs = await Promise.all([big, fine].map(async (id) => (await now.jobs.get(id)).state));
    expect(await failRefusedJobs(jobs, now, silentLogger)).toBe(1);
    const events = await store.readStream(`job-${big}`);
    expect(events.map((e) => e.type)).toEqual(["JobSubmitted", "JobFailed"]);
    expect((events[1]?.data as { Message: string }).Message).toBe(
      "the job breaks today's job limits and cannot run: " +
        "Count: job count 1000000000 is more than the limit of 1000 (JobLimits.MaxCount)",
    );
    expect((await store.readStream(`job-${fine}`)).map((e) => e.type)).toEqual(["JobSubmitted"]);
    // Again (a second start): nothing more is stored.
    expect(await failRefusedJobs([(await now.jobs.get(big)).state], now, silentLogger)).toBe(0);
    expect(await store.readStream(`job-${big}`)).toHaveLength(2);
  });
});

describe("a stored job within today's limits", () => {
  it("is judged as it was stored: defaults configured since (a longer QueueTimeout) never fail it", async () => {
    const store = openStore();
    const before = control(store);
    const timed = spec({ Tasks: [{ ...spec().Tasks[0], Timeouts: { TotalTimeout: 600 } }] });
    const jobId = (await before.submit(timed, operator)).jobId;
    await before.close();
    const longQueue = jobDefaultsOf({ ...defaultConfig(), "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 3_600_000 });
    const clock = new ManualClock(Date.parse("2026-11-28T12:00:00Z"));
    const deadlines = new DeadlineScheduler(clock);
    const now = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: longQueue });
    cleanups.push(() => now.close());
    expect(await failRefusedJobs([(await now.jobs.get(jobId)).state], now, silentLogger)).toBe(0);
    expect((await store.readStream(`job-${jobId}`)).map((e) => e.type)).toEqual(["JobSubmitted"]);
  });
});

describe("work the protocol refuses to carry", () => {
  it("fails the execution (the orchestrator's cause) and its job, with the reason; other errors throw", async () => {
    const store = openStore();
    const c = control(store);
    const jobId = (await c.submit(spec(), operator)).jobId;
    const executionId = executionIdOf(randomUUID());
    const create = {
      type: "Create" as const,
      jobId,
      namespace: "default",
      nodeId: "node-1",
      jobType: "batch" as const,
      jobVersion: 1,
      partitionIndex: 0,
      resources: { CPU: 0.5, Memory: 512_000_000, Disk: 0, GPU: 0 },
      executionTimeout: 0,
      timeoutBuffer: 0,
    };
    await c.executions.execute(executionId, create, operator);
    const execution = (await c.executions.get(executionId)).state;
    const runner = { jobs: c.jobs, executions: c.executions, logger: silentLogger };

    const down = () => {
      throw new Error("NATS is down");
    };
    await expect(sendOrEnd(runner, execution, "AskForBid", down)).rejects.toThrow("NATS is down");
    expect((await store.readStream(`job-${jobId}`)).map((e) => e.type)).toEqual(["JobSubmitted"]);

    const refused = () => {
      throw new ProtocolError("Task.Engine.Parameters[0]: Expected a string at most 8192 character(s) long");
    };
    expect(await sendOrEnd(runner, execution, "AskForBid", refused)).toBe(false);
    const reason =
      "the orchestrator cannot send this job's work to a node: " +
      "Task.Engine.Parameters[0]: Expected a string at most 8192 character(s) long";
    const failed = (await store.readStream(`execution-${executionId}`)).find((e) => e.type === "ExecutionFailed");
    expect(failed?.data).toMatchObject({ Cause: "Orchestrator", Message: reason });
    const jobFailed = (await store.readStream(`job-${jobId}`)).find((e) => e.type === "JobFailed");
    expect(jobFailed?.data).toMatchObject({ Message: reason });
    expect(await sendOrEnd(runner, execution, "AskForBid", () => undefined)).toBe(true);
  });
});

describe("JobLimits.* from config", () => {
  it("takes the keys, and refuses at start limits looser than the wire or defaults they refuse, naming the key", () => {
    const defaults = jobDefaultsOf(defaultConfig());
    const limits = jobLimitsOf({ ...defaultConfig(), "JobLimits.MaxCount": 50 }, defaults);
    expect(limits).toMatchObject({ MaxCount: 50, MinMemory: 6 * 1024 * 1024 });
    const loose = { ...defaultConfig(), "JobLimits.MaxArgumentLength": 9000 };
    expect(() => jobLimitsOf(loose, defaults)).toThrow(StartupError);
    expect(() => jobLimitsOf(loose, defaults)).toThrow(
      /JobLimits.MaxArgumentLength: 9000 is more than Shoal can carry \(at most 8192\)/,
    );
    const small = jobDefaultsOf({ ...defaultConfig(), "JobDefaults.Ops.Task.Resources.Memory": "1Mb" });
    expect(() => jobLimitsOf(defaultConfig(), small)).toThrow(
      /JobDefaults\.Ops\.Task: Tasks\[0\]\.Resources\.Memory: memory "1mb" is less than the minimum/,
    );
  });
});
