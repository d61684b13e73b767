import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * An orchestrator killed with SIGKILL mid-job loses nothing: real `shoal serve` and `shoal
 * compute` processes, a real Docker engine. After the restart on the same DataDir the job
 * completes with its output, its history has each transition once and in order, and the job ran
 * once: one execution, one container started (the engine's own events count them).
 */
const docker = new Docker();
const nodeId = `jd-${randomUUID().slice(0, 8)}`;
const dataDir = tempDir("shoal-jd-orch-");
let image = "";
let apiPort = 0;
let natsPort = 0;
let serve: ShoalProcess | undefined;
let compute: ShoalProcess | undefined;

type Body = Record<string, any>;

const serveArgs = () => [
  "serve",
  "-c", `DataDir=${dataDir}`,
  "-c", "NodeID=node-0",
  "-c", "API.Host=127.0.0.1",
  "-c", `API.Port=${apiPort}`,
  "-c", "Orchestrator.Host=127.0.0.1",
  "-c", `Orchestrator.Port=${natsPort}`,
];
async function startServe(): Promise<ShoalProcess> {
  serve = ShoalProcess.start(serveArgs());
  await serve.waitForOutput("orchestrator node-0 is running", 60_000);
  return serve;
}
const adminKey = () => readFileSync(join(dataDir, "credentials", "api-admin-key"), "utf8").trim();

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey()}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
}
/** A GET that an orchestrator being restarted may not answer yet. */
const tryCall = (path: string) => call("GET", path).catch(() => ({ status: 0, body: {} as Body }));

const batch = (command: string) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } }, Resources: { CPU: "250m", Memory: "32Mb" } }],
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
      last = (await tryCall(`/api/v1/orchestrator/jobs/${jobId}?include=executions,history`)).body;
      return states.includes(last.Job?.State?.StateType);
    },
    timeoutMs,
    () => `job ${jobId} in ${states.join("/")}, last ${JSON.stringify(last.Job?.State)}`,
  );
  return last;
}

/** How many containers of this test's node the engine started since `since` (Unix seconds): a counter no restart can fool. */
async function containerStarts(executionId: string, since: number): Promise<number> {
  const stream = await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: { type: ["container"], event: ["start"], label: [`${NODE_LABEL}=${nodeId}`, `shoal.execution=${executionId}`] },
  });
  let text = "";
  for await (const chunk of stream as unknown as AsyncIterable<Buffer>) text += chunk.toString();
  return text.split("\n").filter((line) => line.trim() !== "").length;
}

/**
 * The job's history, whole: each entry once (SeqNum strictly increasing, no state entered twice),
 * the job Pending → Running → Completed with each entry's Previous the one before, its one
 * execution from New (1) through states that only go forward to Running (6) and Completed (9).
 * The states between New and Running are the dispatcher's (a bid asked for, accepted) and not
 * pinned here.
 */
function expectWholeHistory(history: Body[], executionId: string): void {
  const seq = history.map((h) => h.SeqNum as number);
  expect(seq).toEqual([...seq].sort((a, b) => a - b));
  expect(new Set(seq).size).toBe(seq.length);
  const job = history.filter((h) => h.Type === "JobLevel").map((h) => h.JobState as { Previous: string; New: string });
  expect(job.map((s) => s.New)).toEqual(["Pending", "Running", "Completed"]);
  for (let i = 1; i < job.length; i++) expect(job[i]!.Previous).toBe(job[i - 1]!.New);
  const executions = history.filter((h) => h.Type === "ExecutionLevel");
  expect(new Set(executions.map((h) => h.ExecutionID))).toEqual(new Set([executionId]));
  const states = executions.map((h) => h.ExecutionState.New as number);
  expect(states[0]).toBe(1);
  expect(states.slice(-2)).toEqual([6, 9]);
  for (let i = 1; i < states.length; i++) expect(states[i]!, `execution states ${states.join(",")}`).toBeGreaterThan(states[i - 1]!);
}

const containers = () => docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });

beforeAll(async () => {
  image = await dockerTestImage();
  apiPort = await freePort();
  natsPort = await freePort();
  await startServe();
  startCompute();
  await waitFor(async () => (await tryCall(`/api/v1/orchestrator/nodes/${nodeId}`)).body?.Node?.Membership === "APPROVED", 30_000, () => "compute node approved");
}, 120_000);

const computeDataDir = tempDir(`shoal-jd-${nodeId}-`);
function startCompute(): void {
  compute = ShoalProcess.start([
    "compute", "--node-id", nodeId,
    "-c", `DataDir=${computeDataDir}`,
    "-c", `Compute.Orchestrators=nats://127.0.0.1:${natsPort}`,
    "-c", `Compute.Auth.Token=${readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim()}`,
    "-c", "Compute.Heartbeat.Interval=500ms",
    "-c", "Compute.Heartbeat.ResourceUpdateInterval=500ms",
    "-c", "Compute.AllocatedCapacity.CPU=1",
    "-c", "Compute.AllocatedCapacity.Memory=256Mi",
  ]);
}

afterAll(async () => {
  if (compute && compute.child.exitCode === null && compute.child.signalCode === null) await compute.kill("SIGTERM");
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) await serve.kill("SIGTERM");
  for (const c of await containers()) await docker.getContainer(c.Id).remove({ force: true });
});

describe("an orchestrator killed with SIGKILL loses no job", () => {
  it("mid-job, its execution Running in Docker: after the restart the job completes once, its output and history whole", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const jobId = await submit(batch("sleep 3; echo survived"));
    let executionId = "";
    await waitFor(async () => {
      const items = (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions`)).body.Items as Body[] | undefined;
      executionId = items?.[0]?.ID ?? "";
      return items?.[0]?.ComputeState?.StateType === 6;
    }, 30_000, () => "execution Running");
    expect((await containers()).filter((c) => c.State === "running").map((c) => c.Labels["shoal.execution"])).toEqual([executionId]);

    await serve!.kill("SIGKILL");
    await startServe();

    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items.map((e: Body) => e.ID)).toEqual([executionId]);
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "survived\n", ExitCode: 0 });
    expectWholeHistory(got.History.Items as Body[], executionId);
    expect(await containerStarts(executionId, since)).toBe(1);
  }, 150_000);

  it("right after the PUT is acknowledged: after the restart the job still runs, once", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const jobId = await submit(batch("echo placed-after-restart"));
    await serve!.kill("SIGKILL");
    const killedAt = Date.now();
    await startServe();

    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    const executionId = got.Executions.Items[0].ID as string;
    // Placed by the restarted orchestrator (CreateTime in nanoseconds): the kill came before placement.
    expect(got.Executions.Items[0].CreateTime / 1e6).toBeGreaterThanOrEqual(killedAt);
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "placed-after-restart\n", ExitCode: 0 });
    expectWholeHistory(got.History.Items as Body[], executionId);
    expect(await containerStarts(executionId, since)).toBe(1);
  }, 150_000);

  it("after placement, its execution not yet taken by the node (the node was away): the restarted orchestrator sends it again", async () => {
    // The node is gone but still HEALTHY (DisconnectTimeout 1m): the job is placed there and
    // RunExecution reaches nobody. Past the workflow's checkpoint save (1 s) the orchestrator is
    // killed, so its restart does not replay the ExecutionCreated step.
    await compute!.kill("SIGKILL");
    const since = Math.floor(Date.now() / 1000) - 1;
    const jobId = await submit(batch("echo sent-again"));
    await waitFor(async () => (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions`)).body.Items?.[0]?.ComputeState?.StateType === 1, 30_000, () => "execution New");
    // The workflow saves its checkpoint after a batch once 1 s has passed since the last save: a
    // later job (one no node matches, so it fails at once) moves it past the ExecutionCreated step.
    await new Promise((r) => setTimeout(r, 1_500));
    const later = await submit({ ...batch("true"), Constraints: [{ Key: "zone", Operator: "=", Values: ["nowhere"] }] });
    await settled(later, ["Failed"]);
    await new Promise((r) => setTimeout(r, 500));
    await serve!.kill("SIGKILL");
    startCompute();
    await startServe();

    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    const executionId = got.Executions.Items[0].ID as string;
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "sent-again\n", ExitCode: 0 });
    expectWholeHistory(got.History.Items as Body[], executionId);
    expect(await containerStarts(executionId, since)).toBe(1);
  }, 150_000);
});
