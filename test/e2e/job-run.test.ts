import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { firstExecutionIn, settled, untilExecutions } from "../support/job-waits.ts";
import { containersOf, removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { waitFor, type ShoalProcess } from "../support/shoal-process.ts";

/**
 * A submitted job runs, end to end: the orchestrator (with its own NATS) places it, a real
 * `shoal compute` runs it in Docker, and its end comes back over the REST API with whole history.
 */
const KEY = "jobs-key-0123456789abcdefghijklmn";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const nodeId = `jr-${randomUUID().slice(0, 8)}`;
let image = "";
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let compute: ShoalProcess | undefined;
const jobs = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);

const batch = (command: string, resources?: Record<string, string>, timeouts: Record<string, number> = {}) =>
  shellJob(image, command, { resources, timeouts });
const containers = () => containersOf(nodeId);

/** A `shoal compute` process joined to this test's orchestrator: 1 CPU, 256 MiB, fast heartbeats. */
const startCompute = (id: string, settings: readonly string[]): ShoalProcess =>
  startComputeProcess({
    nodeId: id,
    dataDir: tempDir(`shoal-jr-${id}-`),
    orchestrators: orchestrator.natsUrl,
    token: orchestrator.joinToken.token,
    settings,
  });

beforeAll(async () => {
  image = await dockerTestImage();
  config = await ownNatsOrchestratorConfig("shoal-jr-orch-", { "API.Auth.Users": USERS });
  orchestrator = await startOrchestrator(config, silentLogger);
  compute = startCompute(nodeId, ["Compute.Docker.StopGracePeriod=1s"]);
  await untilApproved(jobs, nodeId, compute);
}, 120_000);

afterAll(async () => {
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

describe("a submitted job runs on a compute node", () => {
  it("batch `echo hello`: Completed, its execution Completed with the output, history whole", async () => {
    const jobId = await jobs.submit(batch("echo hello"));
    const got = await settled(jobs, jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    const execution = got.Executions.Items[0];
    expect(execution.NodeID).toBe(nodeId);
    expect(execution.RunOutput).toMatchObject({ Stdout: "hello\n", ExitCode: 0 });
    const types = (got.History.Items as Body[]).map(
      (h) => `${h.Type}:${h.JobState?.New ?? h.ExecutionState?.New ?? ""}`,
    );
    expect(types.filter((t) => t.startsWith("JobLevel"))).toEqual([
      "JobLevel:Pending",
      "JobLevel:Running",
      "JobLevel:Completed",
    ]);
    // Bacalhau's integers: 1 New, 3 AskForBidAccepted (the node's bid), 5 BidAccepted (approved), 6 Running, 9
    // Completed.
    expect(types.filter((t) => t.startsWith("ExecutionLevel"))).toEqual([
      "ExecutionLevel:1",
      "ExecutionLevel:3",
      "ExecutionLevel:5",
      "ExecutionLevel:6",
      "ExecutionLevel:9",
    ]);
    const bid = (got.History.Items as Body[]).find((h) => h.ExecutionState?.New === 3);
    expect(bid).toMatchObject({ ExecutionState: { Previous: 1, New: 3 }, Event: { Message: "Accepted job" } });
  }, 90_000);

  it("a failing command fails the job with its exit code", async () => {
    const jobId = await jobs.submit(batch("echo oops >&2; exit 3"));
    const got = await settled(jobs, jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Failed");
    expect(got.Job.State.Message).toContain("exited with code 3");
  }, 90_000);

  it("a job needing more than any node has: Failed with the scheduler's message; with a QueueTimeout, Queued", async () => {
    const failed = await jobs.submit(batch("true", { CPU: "8", Memory: "32Mb" }));
    const got = await settled(jobs, failed, ["Failed"], 30_000);
    expect(got.Job.State.Message).toContain("not enough nodes to run job. requested: 1, available: 1, suitable: 0.");
    const queued = await jobs.submit(batch("true", { CPU: "8", Memory: "32Mb" }, { QueueTimeout: 600 }));
    const waiting = await settled(jobs, queued, ["Queued", "Failed"], 30_000);
    expect(waiting.Job.State.StateType).toBe("Queued");
    expect(waiting.Job.State.Message).toContain("Job queued. not enough nodes to run job.");
  }, 90_000);

  it("a running job past its TotalTimeout: Failed, its container gone", async () => {
    const jobId = await jobs.submit(batch("sleep 30", undefined, { TotalTimeout: 3 }));
    const got = await settled(jobs, jobId, ["Failed", "Completed"], 30_000);
    expect(got.Job.State.Message).toBe("Job timed out. Job took longer than 3s");
    await waitFor(
      async () => (await containers()).length === 0,
      30_000,
      () => "container removed",
    );
  }, 90_000);

  it("stopping a running `sleep 30` job: Stopped, its container gone", async () => {
    const jobId = await jobs.submit(batch("sleep 30"));
    await waitFor(
      async () => (await containers()).some((c) => c.State === "running"),
      30_000,
      () => "container running",
    );
    const stop = await jobs.stop(jobId, "enough");
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    const got = await settled(jobs, jobId, ["Stopped"], 10_000);
    expect(got.Job.State.StateType).toBe("Stopped");
    await waitFor(
      async () => (await containers()).length === 0,
      30_000,
      () => "container removed",
    );
    await untilExecutions(jobs, jobId, firstExecutionIn(11), "execution Cancelled", 10_000);
  }, 90_000);

  it("a job Queued while no node matches runs when a matching node joins", async () => {
    const spec = {
      ...batch("echo matched", undefined, { QueueTimeout: 600 }),
      Constraints: [{ Key: "zone", Operator: "=", Values: ["b"] }],
    };
    const jobId = await jobs.submit(spec);
    const waiting = await settled(jobs, jobId, ["Queued", "Failed"], 30_000);
    expect(waiting.Job.State.StateType).toBe("Queued");
    const second = `${nodeId}-b`;
    const zoneB = startCompute(second, ["Labels=zone=b"]);
    try {
      const got = await settled(jobs, jobId, ["Completed", "Failed"], 60_000);
      expect(got.Job.State.StateType).toBe("Completed");
      expect(got.Executions.Items.map((e: Body) => [e.NodeID, e.RunOutput?.Stdout])).toEqual([[second, "matched\n"]]);
    } finally {
      await zoneB.kill("SIGTERM");
    }
  }, 120_000);

  it("an orchestrator restarted mid-job loses nothing: the job completes, its history whole", async () => {
    const jobId = await jobs.submit(batch("sleep 3; echo survived"));
    await settled(jobs, jobId, ["Running"], 30_000);
    await untilExecutions(jobs, jobId, firstExecutionIn(6), "execution Running");
    await orchestrator.stop();
    orchestrator = await startOrchestrator(config, silentLogger);
    const got = await settled(jobs, jobId, ["Completed", "Failed"], 60_000);
    expect(got.Job.State.StateType).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "survived\n", ExitCode: 0 });
    const types = (got.History.Items as Body[]).map(
      (h) => `${h.Type}:${h.JobState?.New ?? h.ExecutionState?.New ?? ""}`,
    );
    expect(types).toEqual([
      "JobLevel:Pending",
      "ExecutionLevel:1",
      "ExecutionLevel:3",
      "ExecutionLevel:5",
      "JobLevel:Running",
      "ExecutionLevel:6",
      "ExecutionLevel:9",
      "JobLevel:Completed",
    ]);
  }, 120_000);
});
