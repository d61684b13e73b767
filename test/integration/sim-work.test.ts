import type { AuthUser } from "../../src/config/auth-users.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { Simulation } from "../../src/sim/simulation.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, settled, until } from "../support/job-waits.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * `shoal sim --run-work`: virtual nodes against a real orchestrator (its own nats-server, SQLite)
 * take work over the real protocol and run it in memory. A batch job completes with each node's
 * line of output; a service and a daemon (SHOAL_SIM_RUN=until-stopped) run until the job is
 * stopped, and end Stopped with their executions cancelled; a task the sim cannot read is refused
 * with a reason that names the variable.
 */
const NODES = 4;
const RUN_MS = 300;
const COMPLETED = 9;
const CANCELLED = 11;
const RUNNING = 6;
let orchestrator: RunningOrchestrator;
let sim: Simulation;
const KEY = "sim-work-key-0123456789abcdefghijkl";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);

function simJob(type: string, options: { count?: number; env?: Record<string, string>; rack?: string } = {}) {
  return {
    Type: type,
    ...(options.count === undefined ? {} : { Count: options.count }),
    Constraints: [
      { Key: "sim", Operator: "=", Values: ["true"] },
      ...(options.rack === undefined ? [] : [{ Key: "rack", Operator: "=", Values: [options.rack] }]),
    ],
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: "busybox:sim", Entrypoint: ["sh", "-c"], Parameters: ["echo hi"] } },
        Resources: { CPU: "100m", Memory: "16Mb" },
        ...(options.env === undefined ? {} : { Env: options.env }),
      },
    ],
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  const config = orchestratorConfig("", {
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
    "API.Auth.Users": USERS,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  sim = Simulation.start({
    nodes: NODES,
    idPrefix: "simwork",
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    heartbeatMs: 500,
    jitterMs: 100,
    infoUpdateMs: 2000,
    resourceUpdateMs: 1000,
    joinRatePerSecond: 100,
    // One join at a time, as sim.test.ts explains: concurrent joins race nats-server's reloads.
    maxJoining: 1,
    initialBackoffMs: 200,
    maxBackoffMs: 1000,
    logger: silentLogger,
    dataDir: tempDir("shoal-sim-work-"),
    runWork: { runMs: RUN_MS },
  });
  await waitFor(
    async () => {
      const res = await api.call("GET", "/api/v1/orchestrator/nodes?limit=100");
      const nodes = (res.body.Nodes as Body[]).filter((n) => n.Info.Labels.sim === "true");
      return nodes.length === NODES && nodes.every((n) => n.Membership === "APPROVED" && n.Health === "HEALTHY");
    },
    30_000,
    () => `sim nodes APPROVED and HEALTHY: ${JSON.stringify(sim.fleet.progress())}`,
  );
}, 45_000);

afterAll(async () => {
  await sim?.stop();
  await orchestrator?.stop();
});

describe("shoal sim --run-work against a real orchestrator", () => {
  it("runs a batch job's executions for the run time and completes the job with each node's output", async () => {
    const submittedAt = performance.now();
    const jobId = await api.submit(simJob("batch", { count: 2 }));
    const job = await settled(api, jobId, ["Completed", "Failed"], 20_000);
    expect(job.Job.State.StateType, JSON.stringify(job.Job.State)).toBe("Completed");
    expect(performance.now() - submittedAt).toBeGreaterThanOrEqual(RUN_MS);
    const executions = executionsOf(job);
    expect(executions).toHaveLength(2);
    expect(new Set(executions.map((e) => e.NodeID)).size).toBe(2);
    for (const e of executions) {
      expect(e.ComputeState.StateType).toBe(COMPLETED);
      expect(e.RunOutput).toMatchObject({
        ExitCode: 0,
        Stdout: `sim node ${e.NodeID} runs busybox:sim sh -c echo hi for 300ms\n`,
      });
    }
  });

  it("runs a service until the job is stopped, then ends it Stopped with its executions cancelled", async () => {
    const jobId = await api.submit(simJob("service", { count: 2, env: { SHOAL_SIM_RUN: "until-stopped" } }));
    await until(
      api,
      jobId,
      (j) => executionsOf(j).filter((e) => e.ComputeState?.StateType === RUNNING).length === 2,
      "both service executions running",
      20_000,
    );
    // Well past the run time: a service does not end on its own.
    await sleep(4 * RUN_MS);
    const still = await api.job(jobId);
    expect(still.Job.State.StateType).toBe("Running");
    expect(executionsOf(still).map((e) => e.ComputeState.StateType)).toEqual([RUNNING, RUNNING]);

    const stop = await api.call("DELETE", `/api/v1/orchestrator/jobs/${jobId}?reason=test%20over`);
    expect(stop.status, stop.text).toBe(200);
    const stopped = await until(
      api,
      jobId,
      (j) =>
        j.Job?.State?.StateType === "Stopped" && executionsOf(j).every((e) => e.ComputeState?.StateType === CANCELLED),
      "service Stopped, its executions Cancelled",
      20_000,
    );
    expect(executionsOf(stopped)).toHaveLength(2);
  });

  it("places a daemon on the one node of its rack, runs it until stopped, and stops it", async () => {
    const jobId = await api.submit(simJob("daemon", { rack: "rack-1", env: { SHOAL_SIM_RUN: "until-stopped" } }));
    const running = await until(
      api,
      jobId,
      (j) => executionsOf(j).some((e) => e.ComputeState?.StateType === RUNNING),
      "the daemon's execution running",
      20_000,
    );
    expect(executionsOf(running).map((e) => e.NodeID)).toEqual([sim.fleet.nodeId(1)]);
    const stop = await api.call("DELETE", `/api/v1/orchestrator/jobs/${jobId}?reason=test%20over`);
    expect(stop.status, stop.text).toBe(200);
    await until(
      api,
      jobId,
      (j) => j.Job?.State?.StateType === "Stopped" && executionsOf(j)[0]?.ComputeState?.StateType === CANCELLED,
      "daemon Stopped, its execution Cancelled",
      20_000,
    );
  });

  it("refuses a task whose SHOAL_SIM_RUN it cannot read, naming the variable", async () => {
    const jobId = await api.submit(simJob("batch", { env: { SHOAL_SIM_RUN: "soon" } }));
    const job = await settled(api, jobId, ["Completed", "Failed"], 20_000);
    expect(job.Job.State.StateType).toBe("Failed");
    const messages = executionsOf(job).map((e) => e.ComputeState.Message as string);
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages)
      expect(m).toMatch(/ has SHOAL_SIM_RUN="soon": a sim node reads it as a duration \(e\.g\. 2s\) or until-stopped$/);
  });
});
