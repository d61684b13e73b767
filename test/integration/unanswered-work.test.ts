import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { join } from "node:path";
import { computeInfo, silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, inState, until as untilJob } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { holdPort, killLater, readPid } from "../support/processes.ts";
import { shellJob } from "../support/shell-job.ts";
import { waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * Work a node never answers ends: on real components (the orchestrator with its own NATS and
 * SQLite, compute agents over NATS), a node that joins and heartbeats but runs no executor (what a
 * `shoal sim` node is, and what an agent whose executor is stuck looks like) is sent an execution;
 * within ExecutionAnswerTimeout (3 s here) of the orchestrator listening the execution fails,
 * naming the node, and its partition runs on a real agent with Docker.
 */
const KEY = "unanswered-key-0123456789abcdefghij";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const BOUND_MS = 3_000;
const MIB = 1024 * 1024;
const NEW = 1;
const FAILED = 10;
const COMPLETED = 9;
const CANCELLED = 11;
const docker = new Docker();
let image = "";
let orchestrator: RunningOrchestrator;
let config: ShoalConfig;
const agents: ComputeAgent[] = [];
const nodeIds: string[] = [];
const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
const until = (jobId: string, check: (job: Body) => boolean, what: string, timeoutMs?: number) =>
  untilJob(api, jobId, check, what, timeoutMs);
const firstIn = (stateType: number) => (job: Body) => executionsOf(job)[0]?.ComputeState?.StateType === stateType;
const unanswered = (nodeId: string, what: string) =>
  `Execution unanswered: node ${nodeId} did not answer ${what} within 3s`;
const sleep = (msToWait: number) => new Promise((r) => setTimeout(r, Math.max(0, msToWait)));
const answerBound = (extra: Partial<ShoalConfig> = {}): Partial<ShoalConfig> => ({
  "API.Auth.Users": USERS,
  "Orchestrator.Scheduler.ExecutionAnswerTimeout": BOUND_MS,
  ...extra,
});
/** Bacalhau's times are nanoseconds since the epoch; Shoal's are whole milliseconds. */
const ms = (ns: number) => Math.round(ns / 1e6);

const spec = (type: string, suite: string, command: string, timeouts: Record<string, number> = {}) =>
  shellJob(image, command, { type, constraints: [{ Key: "suite", Operator: "=", Values: [suite] }], timeouts });

/** Until the node read model (what placement reads) shows the node approved and healthy. */
async function joined(nodeId: string, client = api): Promise<void> {
  await waitFor(
    async () => {
      const node = (await client.node(nodeId)).Node;
      return node?.Membership === "APPROVED" && node?.Health === "HEALTHY";
    },
    20_000,
    () => `node ${nodeId} approved and healthy`,
  );
}

/** A node that joins and heartbeats but has no executor: it never answers the work it is sent. */
async function startSilentNode(suite: string, to = orchestrator): Promise<string> {
  const nodeId = `silent-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const nodeInfo = () => computeInfo(nodeId, { suite });
  const token = to.joinToken.token;
  const agent = testAgent({ nodeId, orchestrators: [to.natsUrl], token, labels: { suite }, nodeInfo });
  agents.push(agent);
  await agent.start();
  await joined(
    nodeId,
    new JobApiClient(
      () => to.apiUrl,
      () => KEY,
    ),
  );
  return nodeId;
}

/** A real compute agent running executions in Docker. */
async function startNode(suite: string): Promise<string> {
  const nodeId = `real-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const capacity = { cpuMillis: 1000, memoryBytes: 256 * MIB };
  const executor = new DockerExecutor({ nodeId, capacity, logger: silentLogger, docker, stopGraceSeconds: 0 });
  const { natsUrl, joinToken } = orchestrator;
  const labels = { suite };
  const token = joinToken.token;
  const agent = testAgent({ nodeId, orchestrators: [natsUrl], token, labels, executor, resourceUpdateMs: 200 });
  agents.push(agent);
  await agent.start();
  await joined(nodeId);
  return nodeId;
}

beforeAll(async () => {
  image = await dockerTestImage();
  config = await ownNatsOrchestratorConfig("shoal-unanswered-", answerBound());
  orchestrator = await startOrchestrator(config, silentLogger);
}, 60_000);

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

afterAll(async () => {
  await orchestrator?.stop();
  await removeContainersOf(...nodeIds);
});

describe("an execution its node never answers", () => {
  it("batch: fails within the bound naming the node; the job completes elsewhere, not on the silent one", async () => {
    const suite = `batch-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    // QueueTimeout: the retry waits for a node (the silent one takes no more of the job) rather than failing the job.
    const jobId = await api.submit(spec("batch", suite, "echo answered", { QueueTimeout: 120 }));
    const failed = await until(jobId, firstIn(FAILED), "the first execution failed unanswered", 30_000);
    const lost = executionsOf(failed)[0] as Body;
    expect(lost.NodeID).toBe(silent);
    expect(lost.ComputeState.Message).toBe(unanswered(silent, "AskForBid"));
    expect(ms(lost.ModifyTime) - ms(lost.CreateTime)).toBeGreaterThanOrEqual(BOUND_MS);
    expect(executionsOf(failed)).toHaveLength(1);

    const real = await startNode(suite);
    const done = await until(jobId, inState("Completed", "Failed"), "the job ended", 60_000);
    expect(done.Job.State.StateType).toBe("Completed");
    const executions = executionsOf(done);
    expect(executions).toHaveLength(2);
    const retry = executions.find((e) => e.ID !== lost.ID) as Body;
    expect(retry).toMatchObject({ NodeID: real, PreviousExecution: lost.ID, ComputeState: { StateType: COMPLETED } });
    expect(retry.RunOutput).toMatchObject({ Stdout: "answered\n" });

    // The reason is in the job's history: the execution's end, and the retry that replaced it.
    const history = await api.history(jobId);
    const entryOf = (id: string, prefix: string) =>
      history.find((h) => h.ExecutionID === id && h.Event?.Message?.startsWith(prefix));
    const ended = entryOf(lost.ID, "Execution unanswered");
    const message = unanswered(silent, "AskForBid");
    expect(ended?.Event).toMatchObject({ Topic: "Scheduling", Message: message, Details: { IsError: "true" } });
    const retried = `retry of partition 0: execution ${lost.ID} on node ${silent} failed: ${message}`;
    const requested = entryOf(retry.ID, "Requested execution");
    expect(requested?.Event?.Message).toBe(`Requested execution on ${real} (${retried})`);
  }, 120_000);

  it("ops: the unanswered execution fails the job with the reason (an ops execution is not retried)", async () => {
    const suite = `ops-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    const jobId = await api.submit(spec("ops", suite, "echo never"));
    const done = await until(jobId, inState("Completed", "Failed", "Stopped"), "the ops job ended", 30_000);
    expect(done.Job.State).toMatchObject({ StateType: "Failed" });
    const [only] = executionsOf(done) as [Body];
    const message = unanswered(silent, "RunExecution");
    expect(only).toMatchObject({ NodeID: silent, ComputeState: { StateType: FAILED, Message: message } });
    expect(done.Job.State.Message).toContain(`on node ${silent} failed: ${message}`);
  }, 60_000);

  it("daemon: the unanswered execution fails and its node gets no new one of the job (unanswered again)", async () => {
    const suite = `daemon-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    const jobId = await api.submit(spec("daemon", suite, "sleep 600"));
    const failed = await until(jobId, firstIn(FAILED), "the daemon's execution failed unanswered", 30_000);
    const message = unanswered(silent, "RunExecution");
    expect(executionsOf(failed)[0]).toMatchObject({ NodeID: silent, ComputeState: { Message: message } });
    // Two more bounds: no execution after execution on the same node.
    await sleep(2 * BOUND_MS);
    const later = await api.job(jobId);
    expect(executionsOf(later)).toHaveLength(1);
    expect(later.Job.State.StateType).not.toBe("Failed");
    expect((await api.stop(jobId, "test over")).status).toBe(200);
  }, 60_000);

  it("a job stopped while its node never answered: Stopped, its execution Cancelled (none awaits it)", async () => {
    const suite = `stop-${randomUUID().slice(0, 6)}`;
    await startSilentNode(suite);
    const jobId = await api.submit(spec("batch", suite, "echo never", { QueueTimeout: 120 }));
    await until(jobId, firstIn(NEW), "the execution created");
    expect((await api.stop(jobId, "not answered")).status).toBe(200);
    // The workflow cancels it on the job's stop, without waiting for the node.
    const cancelled = (j: Body) => inState("Stopped")(j) && firstIn(CANCELLED)(j);
    await until(jobId, cancelled, "the job stopped and its execution cancelled", 10_000);
    // The answer bound has nothing left to end: the cancelled execution stays as it is.
    await sleep(BOUND_MS + 500);
    expect(executionsOf(await api.job(jobId)).map((e) => e.ComputeState.StateType)).toEqual([CANCELLED]);
  }, 60_000);

  it("a restart mid-bound re-arms the full bound: the time the orchestrator was down is not the node's", async () => {
    const suite = `restart-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    const jobId = await api.submit(spec("batch", suite, "echo never", { QueueTimeout: 120 }));
    const placed = await until(jobId, firstIn(NEW), "the execution created");
    const execution = executionsOf(placed)[0] as Body;
    await orchestrator.stop();
    // Down for longer than the bound: counted from its creation, the execution would end at once on start.
    await sleep(ms(execution.CreateTime) + BOUND_MS + 1_000 - Date.now());
    const restartedAt = Date.now();
    orchestrator = await startOrchestrator(config, silentLogger);
    expect(executionsOf(await api.job(jobId))[0]?.ComputeState?.StateType).toBe(NEW);
    const failed = await until(jobId, firstIn(FAILED), "the execution failed unanswered", 30_000);
    const lost = executionsOf(failed)[0] as Body;
    expect(lost.ComputeState.Message).toBe(unanswered(silent, "AskForBid"));
    expect(ms(lost.ModifyTime)).toBeGreaterThanOrEqual(restartedAt + BOUND_MS);
    expect((await api.stop(jobId, "test over")).status).toBe(200);
  }, 90_000);

  it("an outage of the orchestrator's own NATS is not the node's: the bound waits, runs in full after", async () => {
    const own = await ownNatsOrchestratorConfig("shoal-unanswered-outage-", answerBound());
    const o = await startOrchestrator(own, silentLogger);
    const cleanups: (() => unknown)[] = [() => o.stop()];
    try {
      const client = new JobApiClient(
        () => o.apiUrl,
        () => KEY,
      );
      const suite = `outage-${randomUUID().slice(0, 6)}`;
      await startSilentNode(suite, o);
      const jobId = await client.submit(spec("batch", suite, "echo never", { QueueTimeout: 120 }));
      const placed = await untilJob(client, jobId, firstIn(NEW), "the execution created");
      const createdAt = ms((executionsOf(placed)[0] as Body).CreateTime);
      // The orchestrator's nats-server dies and cannot come back while its port is held: its transport is down.
      const pidFile = join(own.DataDir, "nats", "nats-server.pid");
      process.kill(readPid(pidFile), "SIGKILL");
      const blocker = await holdPort(own["Orchestrator.Port"]);
      cleanups.push(() => blocker.release());
      await sleep(createdAt + BOUND_MS + 1_500 - Date.now());
      expect(executionsOf(await client.job(jobId))[0]?.ComputeState?.StateType).toBe(NEW);
      const releasedAt = Date.now();
      await blocker.release();
      const failed = await untilJob(client, jobId, firstIn(FAILED), "the execution failed unanswered", 30_000);
      cleanups.push(killLater(readPid(pidFile)));
      expect(ms((executionsOf(failed)[0] as Body).ModifyTime)).toBeGreaterThanOrEqual(releasedAt + BOUND_MS);
    } finally {
      for (const c of cleanups.reverse()) await c();
    }
  }, 90_000);
});
