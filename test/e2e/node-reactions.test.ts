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
import { storedEvents } from "../support/stored-events.ts";

/**
 * Work follows node state end to end (docs/jobs.md, Node reactions): a real `shoal serve` and real
 * `shoal compute` processes running executions in Docker. A compute node killed with SIGKILL
 * mid-run goes silent; after its DisconnectTimeout (3 s here) it is UNHEALTHY, its batch work runs
 * on the other node and its ops work fails; the store shows each loss with the workflow that
 * caused it. A daemon job follows a node whose agent restarts with other labels.
 */
const docker = new Docker();
const suffix = randomUUID().slice(0, 8);
const dataDir = tempDir("shoal-nr-orch-");
let image = "";
let apiPort = 0;
let natsPort = 0;
let serve: ShoalProcess | undefined;
const computes = new Map<string, { process: ShoalProcess; dataDir: string }>();

type Body = Record<string, any>;
const adminKey = () => readFileSync(join(dataDir, "credentials", "api-admin-key"), "utf8").trim();
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey()}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
}

const job = (type: string, labels: Record<string, string>, command: string) => ({
  Type: type,
  Constraints: Object.entries(labels).map(([Key, v]) => ({ Key, Operator: "=", Values: [v] })),
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
      Resources: { CPU: "250m", Memory: "32Mb" },
    },
  ],
});
async function submit(spec: unknown): Promise<string> {
  const res = await call("PUT", "/api/v1/orchestrator/jobs", { Job: spec });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.JobID as string;
}
async function until(jobId: string, check: (job: Body) => boolean, what: string, timeoutMs = 60_000): Promise<Body> {
  let last: Body = {};
  await waitFor(
    async () =>
      check(
        (last = (await call("GET", `/api/v1/orchestrator/jobs/${jobId}?include=executions,history&limit=100`)).body),
      ),
    timeoutMs,
    () =>
      `${what}; job ${JSON.stringify(last.Job?.State)}, executions ${JSON.stringify(last.Executions?.Items?.map((e: Body) => [e.NodeID, e.ComputeState]))}`,
  );
  return last;
}
const executionsOf = (job: Body): Body[] => job.Executions?.Items ?? [];
const state = (e: Body | undefined): number | undefined => e?.ComputeState?.StateType;
const RUNNING = 6;
const COMPLETED = 9;
const FAILED = 10;
const CANCELLED = 11;
const runningOn = (j: Body, nodeId: string) =>
  executionsOf(j).filter((e) => e.NodeID === nodeId && state(e) === RUNNING);
const ended = (j: Body) => ["Completed", "Failed", "Stopped"].includes(j.Job?.State?.StateType);

/** A `shoal compute` process: 1 CPU, 256 MiB, heartbeats every 500 ms; the same DataDir when started again. */
async function startCompute(id: string, labels: string): Promise<void> {
  const dir = computes.get(id)?.dataDir ?? tempDir(`shoal-nr-${id}-`);
  const process = ShoalProcess.start([
    "compute",
    "--node-id",
    id,
    "-c",
    `DataDir=${dir}`,
    "-c",
    `Compute.Orchestrators=nats://127.0.0.1:${natsPort}`,
    "-c",
    `Compute.Auth.Token=${readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim()}`,
    "-c",
    "Compute.Heartbeat.Interval=500ms",
    "-c",
    "Compute.Heartbeat.InfoUpdateInterval=1s",
    "-c",
    "Compute.Heartbeat.ResourceUpdateInterval=500ms",
    "-c",
    "Compute.AllocatedCapacity.CPU=1",
    "-c",
    "Compute.AllocatedCapacity.Memory=256Mi",
    "-c",
    "Compute.Docker.StopGracePeriod=1s",
    "-c",
    `Labels=${labels}`,
  ]);
  computes.set(id, { process, dataDir: dir });
  await waitFor(
    async () => (await call("GET", `/api/v1/orchestrator/nodes/${id}`)).body?.Node?.Health === "HEALTHY",
    30_000,
    () => `node ${id} joined, HEALTHY`,
  );
}
const alive = (p: ShoalProcess) => p.child.exitCode === null && p.child.signalCode === null;

beforeAll(async () => {
  image = await dockerTestImage();
  apiPort = await freePort();
  natsPort = await freePort();
  serve = ShoalProcess.start([
    "serve",
    "-c",
    `DataDir=${dataDir}`,
    "-c",
    "NodeID=node-0",
    "-c",
    "API.Host=127.0.0.1",
    "-c",
    `API.Port=${apiPort}`,
    "-c",
    "Orchestrator.Host=127.0.0.1",
    "-c",
    `Orchestrator.Port=${natsPort}`,
    "-c",
    "Orchestrator.NodeManager.DisconnectTimeout=3s",
    "-c",
    "Orchestrator.NodeManager.UnknownTimeout=1h",
    // The daemon's node restarts its agent on purpose: that gap (a slow start on a loaded machine) is not the silence
    // the labels test is about, so its group may be silent longer than a restart takes.
    "-c",
    'Orchestrator.NodeManager.Overrides=[{"Selector":"restart=expected","DisconnectTimeout":"1m"}]',
  ]);
  await serve.waitForOutput("orchestrator node-0 is running", 60_000);
}, 120_000);

afterAll(async () => {
  for (const { process } of computes.values()) if (alive(process)) await process.kill("SIGTERM");
  if (serve && alive(serve)) await serve.kill("SIGTERM");
  for (const id of computes.keys()) {
    for (const c of await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${id}`] } }))
      await docker.getContainer(c.Id).remove({ force: true });
  }
});

describe("a compute node killed mid-run", () => {
  it("has its batch work rescheduled on the other node (the job completes) and its ops work failed, each loss recorded with the workflow", async () => {
    const suite = `kill-${suffix}`;
    const [a, b] = [`a-${suite}`, `b-${suite}`];
    await startCompute(a, `suite=${suite}`);
    await startCompute(b, `suite=${suite}`);
    const batch = await submit(job("batch", { suite }, "sleep 10; echo done"));
    const ops = await submit(job("ops", { suite }, "sleep 10; echo ops"));
    const placed = await until(batch, (j) => state(executionsOf(j)[0]) === RUNNING, "the batch running");
    const x = executionsOf(placed)[0]?.NodeID as string;
    const y = x === a ? b : a;
    const opsRunning = await until(
      ops,
      (j) => runningOn(j, a).length === 1 && runningOn(j, b).length === 1,
      "the ops job running on both",
    );
    const lostBatch = executionsOf(placed)[0]?.ID as string;
    const lostOps = runningOn(opsRunning, x)[0]?.ID as string;

    await computes.get(x)?.process.kill("SIGKILL");

    const done = await until(batch, ended, "the batch ended", 90_000);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(executionsOf(done).map((e) => [e.NodeID, state(e), e.ComputeState.Message])).toEqual([
      [x, FAILED, `Execution lost: node ${x} became UNHEALTHY`],
      [y, COMPLETED, expect.any(String)],
    ]);
    expect(executionsOf(done)[1]).toMatchObject({ PreviousExecution: lostBatch, RunOutput: { Stdout: "done\n" } });
    const opsDone = await until(ops, ended, "the ops job ended", 90_000);
    expect(opsDone.Job.State.StateType).toBe("Failed");
    expect(opsDone.Job.State.Message).toBe(
      `Job failed because one or more executions failed: execution ${lostOps} on node ${x} failed: Execution lost: node ${x} became UNHEALTHY`,
    );

    // The audit trail: the node's event, the workflow's step, each loss caused by them.
    const events = await storedEvents(dataDir);
    const unhealthy = events.filter((e) => e.stream === `node-${x}` && e.type === "NodeBecameUnhealthy");
    expect(unhealthy).toHaveLength(1);
    const step = events.find(
      (e) =>
        e.stream === "workflow-node-reactions" &&
        e.type === "WorkflowStepRecorded" &&
        (e.data as Body).Input.EventID === unhealthy[0]?.id,
    );
    expect((step?.data as Body | undefined)?.Commands).toEqual([
      expect.objectContaining({ Type: "QueueNodeLoss", EntityID: x, Reason: `node ${x} became UNHEALTHY` }),
    ]);
    for (const id of [lostBatch, lostOps]) {
      const failed = events.filter((e) => e.stream === `execution-${id}` && e.type === "ExecutionFailed");
      expect(failed).toHaveLength(1);
      expect(failed[0]?.metadata).toMatchObject({
        actor: { type: "workflow", id: "node-reactions" },
        reason: `node ${x} became UNHEALTHY`,
        causationId: unhealthy[0]?.id,
      });
    }
    // The replacement's creation says why, in the jobs workflow's name.
    const replacement = executionsOf(done)[1]?.ID as string;
    const created = events.find((e) => e.stream === `execution-${replacement}` && e.type === "ExecutionCreated");
    expect(created?.metadata).toMatchObject({
      actor: { type: "workflow", id: "jobs" },
      reason: `retry of partition 0: execution ${lostBatch} on node ${x} failed: Execution lost: node ${x} became UNHEALTHY`,
    });
  }, 180_000);
});

describe("a daemon job", () => {
  it("leaves a node whose agent restarts with labels that no longer match, and comes back when they match again", async () => {
    const suite = `daemon-${suffix}`;
    const n = `d-${suite}`;
    await startCompute(n, `suite=${suite},role=edge,restart=expected`);
    const daemon = await submit(job("daemon", { suite, role: "edge" }, "sleep 600"));
    const first = runningOn(await until(daemon, (j) => runningOn(j, n).length === 1, "the daemon running"), n)[0]
      ?.ID as string;
    await computes.get(n)?.process.kill("SIGTERM");
    await startCompute(n, `suite=${suite},role=core,restart=expected`);
    const left = await until(
      daemon,
      (j) => state(executionsOf(j).find((e) => e.ID === first)) === CANCELLED,
      "the daemon's execution stopped",
      60_000,
    );
    expect(executionsOf(left).find((e) => e.ID === first)?.ComputeState.Message).toBe(
      `Execution stopped: node ${n} no longer matches the job's constraints (role = edge: role is now core)`,
    );
    await computes.get(n)?.process.kill("SIGTERM");
    await startCompute(n, `suite=${suite},role=edge,restart=expected`);
    const again = await until(daemon, (j) => runningOn(j, n).length === 1, "the daemon running again", 60_000);
    expect(executionsOf(again).map(state)).toEqual([CANCELLED, RUNNING]);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).status).toBe(200);
  }, 180_000);
});
