import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { Schema } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { executionIdOf } from "../../machines/job/job-id.ts";
import type { ExecutionCommand } from "../../machines/execution/execution-commands.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { sendError } from "../../src/api/error-body.ts";
import { GetJobResponse, ListExecutionsResponse, jobRoutes } from "../../src/api/jobs/job-routes.ts";
import { registerRoutes } from "../../src/api/route.ts";
import { stopJobCommand } from "../../src/api/jobs/stop-job-command.ts";
import type { CommandContext } from "../../src/actors/command-context.ts";
import { defaultConfig } from "../../src/config/keys.ts";
import { ShoalError } from "../../src/errors/shoal-error.ts";
import { StartupError } from "../../src/errors/startup-error.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { jobDefaultsOf } from "../../src/orchestrator/job-defaults-config.ts";
import { JobHistory } from "../../src/projections/jobs/job-history.ts";
import { ClusterAsOf } from "../../src/projections/as-of/cluster-as-of.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";

/**
 * JobControl, the job read model and the job routes over a real SQLite file and real HTTP, with
 * executions created on the core directly (placement, which creates them in Shoal, is the next
 * part): their views, their history and their deadlines.
 */

const operator = commandContext({ type: "operator", id: "alice" });
const spec = (timeouts: Record<string, number> = {}) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } }, Timeouts: timeouts }],
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(file = join(tempDir(), "shoal.db"), start = Date.parse("2026-11-22T12:00:00Z")) {
  const clock = new ManualClock(start);
  const store = new SqliteEventStore(file);
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS });
  const views = new JobViews();
  const host = new ProcessorHost({ store, logger: silentLogger, clock });
  const projection = host.add({ name: "job-views", handle: (batch) => batch.forEach(views.handleEnvelope) });
  await host.start();
  const app: FastifyInstance = Fastify();
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  const asOf = new ClusterAsOf({ store, clock, logger: silentLogger });
  const { run } = stopJobCommand(control);
  const stop = (jobId: string, reason: string, context: CommandContext) =>
    run(jobId, { Reason: reason }, context, undefined);
  registerRoutes(app, jobRoutes({ control, views, projection, history: new JobHistory(store), asOf, stop }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address() as { port: number };
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${address.port}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  cleanups.push(
    () => store.close(),
    () => deadlines.stop(),
    () => control.close(),
    () => host.stop(),
    () => app.close(),
  );
  const createExecution = async (jobId: string, executionTimeout = 0) => {
    const id = executionIdOf(randomUUID());
    const command: ExecutionCommand = {
      type: "Create",
      jobId,
      namespace: "default",
      nodeId: "node-1",
      jobType: "batch",
      jobVersion: 1,
      partitionIndex: 0,
      resources: { CPU: 0.5, Memory: 512_000_000, Disk: 0, GPU: 0 },
      executionTimeout,
      timeoutBuffer: 0,
    };
    await control.executions.execute(id, command, operator);
    return id;
  };
  const synced = async () => {
    const last = (await store.readAll()).at(-1)?.position;
    await projection.waitFor(last);
  };
  return { clock, store, control, views, get, createExecution, synced, file };
}

function decodes(schema: Schema.Schema.Any, body: unknown): void {
  const decoded = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>, {
    onExcessProperty: "error",
    errors: "all",
  })(body);
  expect(decoded._tag === "Left" ? String(decoded.left) : "ok").toBe("ok");
}

describe("JobControl", () => {
  it("stores nothing for an invalid spec and names every problem", async () => {
    const { control, store } = await setup();
    const error = await control.submit({ Type: "batch", Tasks: [] }, operator).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalError);
    expect((error as ShoalError).kind).toBe("BadRequest");
    expect((error as ShoalError).details?.problems).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "Tasks" })]),
    );
    expect(await store.readAll()).toEqual([]);
    expect(control.jobs.residentCount).toBe(0);
  });

  it("refuses to stop a Completed or Failed job as Bacalhau does; a Stopped one is a no-op", async () => {
    const { control, store } = await setup();
    const completed = (await control.submit(spec(), operator)).jobId;
    await control.jobs.execute(completed, { type: "Complete" }, operator);
    await expect(control.stop(completed, "late", operator)).rejects.toMatchObject({
      kind: "Conflict",
      message: "cannot stop job in state Completed",
    });
    const failed = (await control.submit(spec(), operator)).jobId;
    await control.jobs.execute(failed, { type: "Fail", reason: "broken" }, operator);
    await expect(control.stop(failed, "late", operator)).rejects.toMatchObject({
      kind: "Conflict",
      message: expect.stringContaining("terminal state Failed"),
    });
    const stopped = (await control.submit(spec(), operator)).jobId;
    expect((await control.stop(stopped, "once", operator)).position).toBeDefined();
    expect((await control.stop(stopped, "twice", operator)).position).toBeUndefined();
    expect((await store.readStream(`job-${stopped}`)).map((e) => e.type)).toEqual(["JobSubmitted", "JobStopped"]);
    await expect(control.stop("j-00000000-0000-4000-8000-00000000dead", "x", operator)).rejects.toMatchObject({
      kind: "NotFound",
    });
  });

  it("arms an execution's ExecutionTimeout on the core, and arms it again from the read model after a restart", async () => {
    const first = await setup();
    const jobId = (await first.control.submit(spec({ ExecutionTimeout: 60 }), operator)).jobId;
    const executionId = await first.createExecution(jobId, 60);
    for (const type of ["AskForBid", "AcceptBid", "Approve", "Start"] as const)
      await first.control.executions.execute(executionId, { type }, operator);
    await first.clock.advance(30_000);
    expect(first.views.execution(executionId)?.computeState).toBe("Running");
    // Restart: a new host on the same file, deadlines armed from the read model's fold only.
    for (const c of cleanups.splice(0).reverse()) await c();
    const second = await setup(first.file, first.clock.now());
    await second.synced();
    second.control.armRecovered(second.views.allJobs(), second.views.allExecutions());
    await second.clock.advance(61_000);
    await second.synced();
    expect(second.views.execution(executionId)).toMatchObject({
      computeState: "Failed",
      computeMessage: "Execution timed out. Execution took longer than 1m0s",
    });
  });
});

describe("executions and history over HTTP", () => {
  it("serves a job's executions as models.Execution and merges their history with the job's, in store order", async () => {
    const { control, get, createExecution, synced } = await setup();
    const jobId = (await control.submit(spec(), operator)).jobId;
    const a = await createExecution(jobId);
    const b = await createExecution(jobId);
    for (const type of ["AskForBid", "AcceptBid", "Approve", "Start"] as const)
      await control.executions.execute(a, { type }, operator);
    await control.jobs.execute(jobId, { type: "Run" }, operator);
    const output = {
      Stdout: "hi\n",
      StdoutTruncated: false,
      stderr: "",
      StderrTruncated: false,
      ExitCode: 0,
      ErrorMsg: "",
    };
    await control.executions.execute(a, { type: "Complete", output }, operator);
    await control.executions.execute(b, { type: "Reject", reason: "more executions than needed" }, operator);
    await synced();

    const executions = await get(`/api/v1/orchestrator/jobs/${jobId}/executions`);
    expect(executions.status).toBe(200);
    decodes(ListExecutionsResponse, executions.body);
    expect(executions.body.Items.map((e: any) => e.ID)).toEqual([a, b]);
    expect(executions.body.Items[0]).toMatchObject({
      JobID: jobId,
      NodeID: "node-1",
      ComputeState: { StateType: 9, Message: "" },
      DesiredState: { StateType: 2, Message: "execution completed" },
      RunOutput: output,
      AllocatedResources: { Tasks: { main: { CPU: 0.5, Memory: 512_000_000, Disk: 0, GPU: 0 } } },
      Revision: 6,
    });
    expect(executions.body.Items[1]).toMatchObject({ ComputeState: { StateType: 8 }, DesiredState: { StateType: 2 } });
    const paged = await get(`/api/v1/orchestrator/jobs/${jobId}/executions?limit=1&reverse=true`);
    expect(paged.body.Items.map((e: any) => e.ID)).toEqual([b]);
    const rest = await get(
      `/api/v1/orchestrator/jobs/${jobId}/executions?limit=1&reverse=true&next_token=${paged.body.NextToken}`,
    );
    expect(rest.body).toMatchObject({ Items: [{ ID: a }], NextToken: "" });

    const history = (await get(`/api/v1/orchestrator/jobs/${jobId}/history`)).body.Items as any[];
    expect(history.map((h) => [h.Type, h.ExecutionID ?? "", h.Event.Message])).toEqual([
      ["JobLevel", "", "Job submitted"],
      ["ExecutionLevel", a, "Requested execution on node-1"],
      ["ExecutionLevel", b, "Requested execution on node-1"],
      ["ExecutionLevel", a, "Accepted job"],
      ["ExecutionLevel", a, "Running"],
      ["ExecutionLevel", a, "Running"],
      ["JobLevel", "", "Running"],
      ["ExecutionLevel", a, "Completed successfully"],
      ["ExecutionLevel", b, "more executions than needed"],
    ]);
    expect(history.map((h) => h.SeqNum)).toEqual([...history.map((h) => h.SeqNum)].sort((x, y) => x - y));
    expect(history[1].ExecutionState).toEqual({ Previous: 0, New: 1 });
    expect(history[3].ExecutionState).toEqual({ Previous: 2, New: 3 });
    expect(history[7].ExecutionState).toEqual({ Previous: 6, New: 9 });
    const onlyB = (await get(`/api/v1/orchestrator/jobs/${jobId}/history?execution_id=${b}`)).body.Items as any[];
    expect(onlyB.map((h) => h.Event.Message)).toEqual(["Requested execution on node-1", "more executions than needed"]);
    const jobOnly = (await get(`/api/v1/orchestrator/jobs/${jobId}/history?event_type=job`)).body.Items as any[];
    expect(jobOnly.map((h) => h.Type)).toEqual(["JobLevel", "JobLevel"]);

    const full = await get(`/api/v1/orchestrator/jobs/${jobId}?include=history,executions`);
    decodes(GetJobResponse, full.body);
    expect(full.body.Job.State.StateType).toBe("Running");
    expect(full.body.Executions.Items).toEqual(executions.body.Items);
    expect(full.body.History.Items).toEqual(history);
  });
});

describe("JobDefaults from config", () => {
  it("takes the keys in whole seconds and refuses bad ones at start, naming the key", () => {
    const config = {
      ...defaultConfig(),
      "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 90_000,
      "JobDefaults.Ops.Task.Resources.CPU": "2",
    };
    const defaults = jobDefaultsOf(config);
    expect(defaults.Batch.Task.Timeouts).toEqual({ QueueTimeout: 90 });
    expect(defaults.Ops.Task.Resources).toEqual({ CPU: "2", Memory: "512Mb" });
    expect(() => jobDefaultsOf({ ...defaultConfig(), "JobDefaults.Service.Task.Resources.Memory": "lots" })).toThrow(
      StartupError,
    );
    expect(() => jobDefaultsOf({ ...defaultConfig(), "JobDefaults.Batch.Task.Timeouts.TotalTimeout": 1_500 })).toThrow(
      /JobDefaults.Batch.Task.Timeouts.TotalTimeout/,
    );
    expect(() =>
      jobDefaultsOf({
        ...defaultConfig(),
        "JobDefaults.Batch.Task.Timeouts.TotalTimeout": 60_000,
        "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 120_000,
      }),
    ).toThrow(/exceed TotalTimeout/);
  });
});
