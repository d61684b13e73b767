import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * A submitted job runs, end to end: the orchestrator (with its own NATS) places it, a real
 * `shoal compute` runs it in Docker, and its end comes back over the REST API with whole history.
 */
const KEY = "jobs-key-0123456789abcdefghijklmn";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] }];
const docker = new Docker();
const nodeId = `jr-${randomUUID().slice(0, 8)}`;
let image = "";
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let compute: ShoalProcess | undefined;

type Body = Record<string, any>;
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
}

const batch = (command: string, resources: Record<string, string> = { CPU: "250m", Memory: "32Mb" }, timeouts: Record<string, number> = {}) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } }, Resources: resources, Timeouts: timeouts }],
});
async function submit(spec: unknown): Promise<string> {
  const res = await call("PUT", "/api/v1/orchestrator/jobs", { Job: spec });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.JobID as string;
}
async function settled(jobId: string, states: readonly string[], timeoutMs = 60_000): Promise<Body> {
  let last: Body = {};
  await waitFor(
    async () => {
      last = (await call("GET", `/api/v1/orchestrator/jobs/${jobId}?include=executions,history`)).body;
      return states.includes(last.Job?.State?.StateType);
    },
    timeoutMs,
    () => `job ${jobId} in ${states.join("/")}, last ${JSON.stringify(last.Job?.State)}`,
  );
  return last;
}
const containers = () => docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });

/** A `shoal compute` process joined to this test's orchestrator: 1 CPU, 256 MiB, fast heartbeats. */
const startCompute = (id: string, settings: readonly string[]): ShoalProcess =>
  ShoalProcess.start([
    "compute", "--node-id", id,
    "-c", `DataDir=${tempDir(`shoal-jr-${id}-`)}`,
    "-c", `Compute.Orchestrators=${orchestrator.natsUrl}`,
    "-c", `Compute.Auth.Token=${orchestrator.joinToken.token}`,
    "-c", "Compute.Heartbeat.Interval=500ms",
    "-c", "Compute.Heartbeat.ResourceUpdateInterval=500ms",
    "-c", "Compute.AllocatedCapacity.CPU=1",
    "-c", "Compute.AllocatedCapacity.Memory=256Mi",
    ...settings.flatMap((setting) => ["-c", setting]),
  ]);

beforeAll(async () => {
  image = await dockerTestImage();
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-jr-orch-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.Port": 0,
    "API.Auth.Users": USERS,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
  };
  orchestrator = await startOrchestrator(config, silentLogger);
  compute = startCompute(nodeId, ["Compute.Docker.StopGracePeriod=1s"]);
  await waitFor(async () => {
    const node = (await call("GET", `/api/v1/orchestrator/nodes/${nodeId}`)).body;
    return node?.Node?.Membership === "APPROVED" || node?.Membership === "APPROVED";
  }, 30_000, () => "compute node approved");
}, 120_000);

afterAll(async () => {
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  await orchestrator?.stop();
  for (const c of await containers()) await docker.getContainer(c.Id).remove({ force: true });
});

describe("a submitted job runs on a compute node", () => {
  it("batch `echo hello`: Completed, its execution Completed with the output, history whole", async () => {
    const jobId = await submit(batch("echo hello"));
    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    const execution = got.Executions.Items[0];
    expect(execution.NodeID).toBe(nodeId);
    expect(execution.RunOutput).toMatchObject({ Stdout: "hello\n", ExitCode: 0 });
    const types = (got.History.Items as Body[]).map((h) => `${h.Type}:${h.JobState?.New ?? h.ExecutionState?.New ?? ""}`);
    expect(types.filter((t) => t.startsWith("JobLevel"))).toEqual(["JobLevel:Pending", "JobLevel:Running", "JobLevel:Completed"]);
    // Bacalhau's integers: 1 New, 3 AskForBidAccepted (the node's bid), 5 BidAccepted (approved), 6 Running, 9 Completed.
    expect(types.filter((t) => t.startsWith("ExecutionLevel"))).toEqual(["ExecutionLevel:1", "ExecutionLevel:3", "ExecutionLevel:5", "ExecutionLevel:6", "ExecutionLevel:9"]);
    const bid = (got.History.Items as Body[]).find((h) => h.ExecutionState?.New === 3);
    expect(bid).toMatchObject({ ExecutionState: { Previous: 1, New: 3 }, Event: { Message: "Accepted job" } });
  }, 90_000);

  it("a failing command fails the job with its exit code", async () => {
    const jobId = await submit(batch("echo oops >&2; exit 3"));
    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Failed");
    expect(got.Job.State.Message).toContain("exited with code 3");
  }, 90_000);

  it("a job needing more than any node has: Failed with the scheduler's message; with a QueueTimeout, Queued", async () => {
    const failed = await submit(batch("true", { CPU: "8", Memory: "32Mb" }));
    const got = await settled(failed, ["Failed"], 30_000);
    expect(got.Job.State.Message).toContain("not enough nodes to run job. requested: 1, available: 1, suitable: 0.");
    const queued = await submit(batch("true", { CPU: "8", Memory: "32Mb" }, { QueueTimeout: 600 }));
    const waiting = await settled(queued, ["Queued", "Failed"], 30_000);
    expect(waiting.Job.State.StateType).toBe("Queued");
    expect(waiting.Job.State.Message).toContain("Job queued. not enough nodes to run job.");
  }, 90_000);

  it("a running job past its TotalTimeout: Failed, its container gone", async () => {
    const jobId = await submit(batch("sleep 30", undefined, { TotalTimeout: 3 }));
    const got = await settled(jobId, ["Failed", "Completed"], 30_000);
    expect(got.Job.State.Message).toBe("Job timed out. Job took longer than 3s");
    await waitFor(async () => (await containers()).length === 0, 30_000, () => "container removed");
  }, 90_000);

  it("stopping a running `sleep 30` job: Stopped, its container gone", async () => {
    const jobId = await submit(batch("sleep 30"));
    await waitFor(async () => (await containers()).some((c) => c.State === "running"), 30_000, () => "container running");
    const stop = await call("DELETE", `/api/v1/orchestrator/jobs/${jobId}?reason=enough`);
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    const got = await settled(jobId, ["Stopped"], 10_000);
    expect(got.Job.State.StateType).toBe("Stopped");
    await waitFor(async () => (await containers()).length === 0, 30_000, () => "container removed");
    await waitFor(async () => {
      const e = (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions`)).body;
      return e.Items?.[0]?.ComputeState?.StateType === 11; // Cancelled
    }, 10_000, () => "execution Cancelled");
  }, 90_000);

  it("a job Queued while no node matches runs when a matching node joins", async () => {
    const spec = { ...batch("echo matched"), Constraints: [{ Key: "zone", Operator: "=", Values: ["b"] }] };
    spec.Tasks[0]!.Timeouts = { QueueTimeout: 600 };
    const jobId = await submit(spec);
    const waiting = await settled(jobId, ["Queued", "Failed"], 30_000);
    expect(waiting.Job.State.StateType).toBe("Queued");
    const second = `${nodeId}-b`;
    const zoneB = startCompute(second, ["Labels=zone=b"]);
    try {
      const got = await settled(jobId, ["Completed", "Failed"], 60_000);
      expect(got.Job.State.StateType).toBe("Completed");
      expect(got.Executions.Items.map((e: Body) => [e.NodeID, e.RunOutput?.Stdout])).toEqual([[second, "matched\n"]]);
    } finally {
      await zoneB.kill("SIGTERM");
    }
  }, 120_000);

  it("an orchestrator restarted mid-job loses nothing: the job completes, its history whole", async () => {
    const jobId = await submit(batch("sleep 3; echo survived"));
    await settled(jobId, ["Running"], 30_000);
    await waitFor(async () => (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions`)).body.Items?.[0]?.ComputeState?.StateType === 6, 30_000, () => "execution Running");
    await orchestrator.stop();
    orchestrator = await startOrchestrator(config, silentLogger);
    const got = await settled(jobId, ["Completed", "Failed"], 60_000);
    expect(got.Job.State.StateType).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "survived\n", ExitCode: 0 });
    const types = (got.History.Items as Body[]).map((h) => `${h.Type}:${h.JobState?.New ?? h.ExecutionState?.New ?? ""}`);
    expect(types).toEqual(["JobLevel:Pending", "ExecutionLevel:1", "ExecutionLevel:3", "ExecutionLevel:5", "JobLevel:Running", "ExecutionLevel:6", "ExecutionLevel:9", "JobLevel:Completed"]);
  }, 120_000);
});
