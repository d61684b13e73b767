import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { computeInfo, silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, inState, until as untilJob } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
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
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] }];
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
const api = new JobApiClient(() => orchestrator.apiUrl, () => KEY);
const until = (jobId: string, check: (job: Body) => boolean, what: string, timeoutMs?: number) => untilJob(api, jobId, check, what, timeoutMs);
/** Bacalhau's times are nanoseconds since the epoch; Shoal's are whole milliseconds. */
const ms = (ns: number) => Math.round(ns / 1e6);

const spec = (type: string, suite: string, command: string, timeouts: Record<string, number> = {}) =>
  shellJob(image, command, { type, constraints: [{ Key: "suite", Operator: "=", Values: [suite] }], timeouts });

async function joined(nodeId: string): Promise<void> {
  await waitFor(async () => {
    const node = (await api.node(nodeId)).Node;
    return node?.Membership === "APPROVED" && node?.Health === "HEALTHY";
  }, 20_000, () => `node ${nodeId} approved and healthy`);
}

/** A node that joins and heartbeats but has no executor: it never answers the work it is sent. */
async function startSilentNode(suite: string): Promise<string> {
  const nodeId = `silent-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const agent = testAgent({ nodeId, orchestrators: [orchestrator.natsUrl], token: orchestrator.joinToken.token, labels: { suite }, nodeInfo: () => computeInfo(nodeId, { suite }) });
  agents.push(agent);
  await agent.start();
  await joined(nodeId);
  return nodeId;
}

/** A real compute agent running executions in Docker. */
async function startNode(suite: string): Promise<string> {
  const nodeId = `real-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const executor = new DockerExecutor({ nodeId, capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB }, logger: silentLogger, docker, stopGraceSeconds: 0 });
  const agent = testAgent({ nodeId, orchestrators: [orchestrator.natsUrl], token: orchestrator.joinToken.token, labels: { suite }, executor, resourceUpdateMs: 200 });
  agents.push(agent);
  await agent.start();
  await joined(nodeId);
  return nodeId;
}

beforeAll(async () => {
  image = await dockerTestImage();
  config = await ownNatsOrchestratorConfig("shoal-unanswered-", { "API.Auth.Users": USERS, "Orchestrator.Scheduler.ExecutionAnswerTimeout": BOUND_MS });
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
  it("batch: fails within the bound naming the node, and the job completes on another node (the silent one is not tried again)", async () => {
    const suite = `batch-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    // QueueTimeout: the retry waits for a node (the silent one takes no more of the job) instead of failing the job.
    const jobId = await api.submit(spec("batch", suite, "echo answered", { QueueTimeout: 120 }));
    const failed = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === FAILED, "the first execution failed unanswered", 30_000);
    const lost = executionsOf(failed)[0] as Body;
    expect(lost.NodeID).toBe(silent);
    expect(lost.ComputeState.Message).toBe(`Execution unanswered: node ${silent} did not answer AskForBid within 3s`);
    expect(ms(lost.ModifyTime) - ms(lost.CreateTime)).toBeGreaterThanOrEqual(BOUND_MS);
    expect(executionsOf(failed)).toHaveLength(1);

    const real = await startNode(suite);
    const done = await until(jobId, inState("Completed", "Failed"), "the job ended", 60_000);
    expect(done.Job.State.StateType).toBe("Completed");
    const executions = executionsOf(done);
    expect(executions).toHaveLength(2);
    const retry = executions.find((e) => e.ID !== lost.ID) as Body;
    expect(retry).toMatchObject({ NodeID: real, PreviousExecution: lost.ID, ComputeState: { StateType: COMPLETED }, RunOutput: { Stdout: "answered\n" } });

    // The reason is in the job's history: the execution's end, and the retry that replaced it.
    const history = await api.history(jobId);
    const ended = history.find((h) => h.ExecutionID === lost.ID && h.Event?.Message?.startsWith("Execution unanswered"));
    expect(ended?.Event).toMatchObject({ Topic: "Scheduling", Message: `Execution unanswered: node ${silent} did not answer AskForBid within 3s`, Details: { IsError: "true" } });
    const requested = history.find((h) => h.ExecutionID === retry.ID && h.Event?.Message?.startsWith("Requested execution"));
    expect(requested?.Event?.Message).toBe(`Requested execution on ${real} (retry of partition 0: execution ${lost.ID} on node ${silent} failed: Execution unanswered: node ${silent} did not answer AskForBid within 3s)`);
  }, 120_000);

  it("ops: the unanswered execution fails the job with the reason (an ops execution is not retried)", async () => {
    const suite = `ops-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    const jobId = await api.submit(spec("ops", suite, "echo never"));
    const done = await until(jobId, inState("Completed", "Failed", "Stopped"), "the ops job ended", 30_000);
    expect(done.Job.State).toMatchObject({ StateType: "Failed" });
    const [only] = executionsOf(done) as [Body];
    expect(only).toMatchObject({ NodeID: silent, ComputeState: { StateType: FAILED, Message: `Execution unanswered: node ${silent} did not answer RunExecution within 3s` } });
    expect(done.Job.State.Message).toContain(`on node ${silent} failed: Execution unanswered: node ${silent} did not answer RunExecution within 3s`);
  }, 60_000);

  it("daemon: the unanswered execution fails and its node gets no new one of the job (it would go unanswered again)", async () => {
    const suite = `daemon-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    const jobId = await api.submit(spec("daemon", suite, "sleep 600"));
    const failed = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === FAILED, "the daemon's execution failed unanswered", 30_000);
    expect(executionsOf(failed)[0]).toMatchObject({ NodeID: silent, ComputeState: { Message: `Execution unanswered: node ${silent} did not answer RunExecution within 3s` } });
    // Two more bounds: no execution after execution on the same node.
    await new Promise((r) => setTimeout(r, 2 * BOUND_MS));
    const later = await api.job(jobId);
    expect(executionsOf(later)).toHaveLength(1);
    expect(later.Job.State.StateType).not.toBe("Failed");
    expect((await api.stop(jobId, "test over")).status).toBe(200);
  }, 60_000);

  it("a job stopped while its node never answered is Stopped at once, its execution Cancelled (nothing awaits the node's confirmation)", async () => {
    const suite = `stop-${randomUUID().slice(0, 6)}`;
    await startSilentNode(suite);
    const jobId = await api.submit(spec("batch", suite, "echo never", { QueueTimeout: 120 }));
    await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === NEW, "the execution created");
    expect((await api.stop(jobId, "not answered")).status).toBe(200);
    // The workflow cancels it on the job's stop, without waiting for the node.
    const cancelled = (j: Body) => inState("Stopped")(j) && executionsOf(j)[0]?.ComputeState?.StateType === CANCELLED;
    await until(jobId, cancelled, "the job stopped and its execution cancelled", 10_000);
    // The answer bound has nothing left to end: the cancelled execution stays as it is.
    await new Promise((r) => setTimeout(r, BOUND_MS + 500));
    expect(executionsOf(await api.job(jobId)).map((e) => e.ComputeState.StateType)).toEqual([CANCELLED]);
  }, 60_000);

  it("an orchestrator restart mid-bound re-arms the full bound: the time it was down is not held against the node", async () => {
    const suite = `restart-${randomUUID().slice(0, 6)}`;
    const silent = await startSilentNode(suite);
    const jobId = await api.submit(spec("batch", suite, "echo never", { QueueTimeout: 120 }));
    const placed = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === NEW, "the execution created");
    const execution = executionsOf(placed)[0] as Body;
    await orchestrator.stop();
    // Down for longer than the bound: counted from its creation, the execution would end at once on start.
    const downUntil = ms(execution.CreateTime) + BOUND_MS + 1_000;
    await new Promise((r) => setTimeout(r, Math.max(0, downUntil - Date.now())));
    const restartedAt = Date.now();
    orchestrator = await startOrchestrator(config, silentLogger);
    expect(executionsOf(await api.job(jobId))[0]?.ComputeState?.StateType).toBe(NEW);
    const failed = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === FAILED, "the execution failed unanswered", 30_000);
    const lost = executionsOf(failed)[0] as Body;
    expect(lost.ComputeState.Message).toBe(`Execution unanswered: node ${silent} did not answer AskForBid within 3s`);
    expect(ms(lost.ModifyTime)).toBeGreaterThanOrEqual(restartedAt + BOUND_MS);
    expect((await api.stop(jobId, "test over")).status).toBe(200);
  }, 90_000);
});
