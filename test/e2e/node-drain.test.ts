import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, runShoal, waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * A drain that an orchestrator killed with SIGKILL cuts in the middle goes on after the restart
 * and completes, nothing acted twice: real `shoal serve` and `shoal compute` processes, a real
 * Docker engine, the CLI. Node x runs a batch job and a service; it is drained while no other
 * node exists, so neither has anywhere to go: both run on. The orchestrator is killed, restarted
 * on the same DataDir, and node y joins: the batch execution is stopped on x and its job
 * completes on y, the service's replacement starts on y before its original on x stops, and the
 * drain completes.
 */
const docker = new Docker();
const x = `dx-${randomUUID().slice(0, 8)}`;
const y = `dy-${randomUUID().slice(0, 8)}`;
const dataDir = tempDir("shoal-drain-orch-");
let image = "";
let apiPort = 0;
let natsPort = 0;
let serve: ShoalProcess | undefined;
const computes: ShoalProcess[] = [];

type Body = Record<string, any>;

async function startServe(): Promise<void> {
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
  ]);
  await serve.waitForOutput("orchestrator node-0 is running", 60_000);
}
const adminKey = () => readFileSync(join(dataDir, "credentials", "api-admin-key"), "utf8").trim();

function startCompute(nodeId: string): void {
  computes.push(
    ShoalProcess.start([
      "compute",
      "--node-id",
      nodeId,
      "-c",
      `DataDir=${tempDir(`shoal-drain-${nodeId}-`)}`,
      "-c",
      `Compute.Orchestrators=nats://127.0.0.1:${natsPort}`,
      "-c",
      `Compute.Auth.Token=${readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim()}`,
      "-c",
      "Compute.Heartbeat.Interval=500ms",
      "-c",
      "Compute.Heartbeat.ResourceUpdateInterval=500ms",
      "-c",
      "Compute.AllocatedCapacity.CPU=1",
      "-c",
      "Compute.AllocatedCapacity.Memory=256Mi",
    ]),
  );
}

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
const tryGet = (path: string) => call("GET", path).catch(() => ({ status: 0, body: {} as Body }));
const shoal = (args: string[]) =>
  runShoal([
    ...args.slice(0, 2),
    "--api-host",
    "127.0.0.1",
    "--api-port",
    String(apiPort),
    "--api-key",
    adminKey(),
    ...args.slice(2),
  ]);

const spec = (type: string, command: string, over: Record<string, unknown> = {}) => ({
  Type: type,
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
      Resources: { CPU: "250m", Memory: "32Mb" },
      ...over,
    },
  ],
});
async function submit(job: unknown): Promise<string> {
  const res = await call("PUT", "/api/v1/orchestrator/jobs", { Job: job });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.JobID as string;
}
const executions = async (jobId: string): Promise<Body[]> =>
  ((await tryGet(`/api/v1/orchestrator/jobs/${jobId}/executions`)).body.Items as Body[] | undefined) ?? [];
async function until<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  let last: T | undefined;
  await waitFor(
    async () => check((last = await read())),
    timeoutMs,
    () => `${what}; last ${JSON.stringify(last)}`,
  );
  return last as T;
}
const state = (e: Body | undefined) => e?.ComputeState?.StateType as number | undefined;

/** Containers the engine started for one execution since `since` (Unix seconds): a counter no restart can fool. */
async function containerStarts(executionId: string, since: number): Promise<number> {
  const stream = await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: { type: ["container"], event: ["start"], label: [`shoal.execution=${executionId}`] },
  });
  let text = "";
  for await (const chunk of stream as unknown as AsyncIterable<Buffer>) text += chunk.toString();
  return text.split("\n").filter((line) => line.trim() !== "").length;
}

beforeAll(async () => {
  image = await dockerTestImage();
  apiPort = await freePort();
  natsPort = await freePort();
  await startServe();
  startCompute(x);
  await waitFor(
    async () => (await tryGet(`/api/v1/orchestrator/nodes/${x}`)).body?.Node?.Membership === "APPROVED",
    30_000,
    () => "node x approved",
  );
}, 120_000);

afterAll(async () => {
  for (const c of computes) if (c.child.exitCode === null && c.child.signalCode === null) await c.kill("SIGTERM");
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) await serve.kill("SIGTERM");
  for (const nodeId of [x, y]) {
    for (const c of await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } }))
      await docker.getContainer(c.Id).remove({ force: true });
  }
});

describe("a drain survives an orchestrator killed with SIGKILL", () => {
  it("goes on after the restart and completes: the batch job completes on another node, the service's replacement starts before its original stops, nothing acted twice", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    // Long enough to be still running on x when y has joined after the restart (then it moves within a second or two).
    const batchJob = await submit(spec("batch", "sleep 40; echo moved", { Timeouts: { QueueTimeout: 600 } }));
    const service = await submit(spec("service", "sleep 3600"));
    const [batchFirst] = await until(
      () => executions(batchJob),
      (e) => state(e[0]) === 6,
      "the batch execution running on x",
    );
    const [original] = await until(
      () => executions(service),
      (e) => state(e[0]) === 6,
      "the service running on x",
    );
    expect([batchFirst?.NodeID, original?.NodeID]).toEqual([x, x]);

    // The CLI: a bad deadline is a usage error (exit 2) and sends nothing.
    const bad = await shoal(["node", "drain", x, "--deadline", "soon"]);
    expect(bad.code, bad.stderr).toBe(2);
    const ok = await shoal(["node", "drain", x, "--deadline", "10m", "--reason", "hardware swap"]);
    expect(ok.code, ok.stderr).toBe(0);
    // Nowhere to go yet: the batch execution runs on rather than wait Queued, and the service's original stays until a
    // replacement runs.
    const listed = await shoal(["node", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`${x}.*draining until`));
    expect((await executions(batchJob)).map(state)).toEqual([6]);

    await serve!.kill("SIGKILL");
    await startServe();
    startCompute(y);

    const moved = await until(
      () => executions(service),
      (e) => e.some((r) => r.NodeID === y && state(r) === 6) && e.some((r) => r.ID === original?.ID && state(r) === 11),
      "the replacement running on y, the original stopped",
      90_000,
    );
    const replacement = moved.find((r) => r.NodeID === y) as Body;
    const node = await until(
      async () => (await tryGet(`/api/v1/orchestrator/nodes/${x}`)).body.Node as Body,
      (n) => n?.Drain?.Status === "drained",
      "the drain completed",
      60_000,
    );
    expect(node.Drain).toMatchObject({ Reason: "hardware swap", By: { type: "operator" } });
    const done = await until(
      async () => (await tryGet(`/api/v1/orchestrator/jobs/${batchJob}?include=executions`)).body as Body,
      (j) => ["Completed", "Failed"].includes(j.Job?.State?.StateType),
      "the batch job ended",
      90_000,
    );
    expect(done.Job.State.StateType).toBe("Completed");
    expect(
      (done.Executions.Items as Body[]).map((e) => [e.NodeID, state(e), e.RunOutput?.Stdout ?? ""]).sort(),
    ).toEqual([
      [x, 11, ""],
      [y, 9, "moved\n"],
    ]);

    const events = await storedEvents(dataDir);
    const ofType = (stream: string, type: string) => events.filter((e) => e.stream === stream && e.type === type);
    // Each action once: one drain started and completed, each original stopped once, one replacement.
    expect(ofType(`node-${x}`, "NodeDrainStarted")).toHaveLength(1);
    expect(ofType(`node-${x}`, "NodeDrainCompleted")).toHaveLength(1);
    expect(ofType(`execution-${batchFirst?.ID as string}`, "ExecutionCancelled")).toHaveLength(1);
    expect(ofType(`execution-${original?.ID as string}`, "ExecutionCancelled")).toHaveLength(1);
    expect((await executions(service)).filter((e) => e.ID !== original?.ID)).toHaveLength(1);
    const started = ofType(`execution-${replacement.ID as string}`, "ExecutionStarted")[0];
    const stopped = ofType(`execution-${original?.ID as string}`, "ExecutionCancelled")[0];
    expect(started!.position).toBeLessThan(stopped!.position);
    // Every automatic action of the drain names the workflow and why.
    for (const e of [
      ofType(`node-${x}`, "NodeDrainCompleted")[0]!,
      stopped!,
      ofType(`execution-${batchFirst?.ID as string}`, "ExecutionCancelled")[0]!,
    ]) {
      expect(e.metadata.actor).toEqual({ type: "workflow", id: "node-drain" });
      expect(typeof e.metadata.reason).toBe("string");
    }
    const steps = events.filter(
      (e) => e.stream === "workflow-node-drain" && (e.data as Body).Input.Type === "NodeDrainStarted",
    );
    expect(steps).toHaveLength(1);
    expect(await containerStarts(replacement.ID as string, since)).toBe(1);
    expect(await containerStarts(original?.ID as string, since)).toBe(1);

    expect(await call("DELETE", `/api/v1/orchestrator/jobs/${service}`)).toMatchObject({ status: 200 });
  }, 240_000);

  it("its deadline, kept in the node's state, is armed again after the restart: what is left is stopped once and named", async () => {
    // x is drained: a service lands on y and has nowhere to move when y is drained.
    const service = await submit(spec("service", "sleep 3600"));
    const [running] = await until(
      () => executions(service),
      (e) => state(e[0]) === 6,
      "the service running on y",
    );
    expect(running?.NodeID).toBe(y);
    const ok = await shoal(["node", "drain", y, "--deadline", "8s", "-m", "short window"]);
    expect(ok.code, ok.stderr).toBe(0);
    await serve!.kill("SIGKILL");
    await startServe();

    const node = await until(
      async () => (await tryGet(`/api/v1/orchestrator/nodes/${y}`)).body.Node as Body,
      (n) => n?.Drain?.Status === "expired",
      "the deadline reached",
      60_000,
    );
    expect(node.Drain.Left).toBe(1);
    await until(
      () => executions(service),
      (e) => e.some((r) => r.ID === running?.ID && state(r) === 11),
      "the service stopped on y",
    );
    const events = await storedEvents(dataDir);
    const reached = events.filter((e) => e.stream === `node-${y}` && e.type === "NodeDrainDeadlineReached");
    expect(reached).toHaveLength(1);
    expect(reached[0]!.data).toMatchObject({
      Left: [{ ExecutionID: running?.ID, JobID: service, JobType: "service" }],
    });
    // Reached no earlier than the deadline the drain fixed.
    expect(Date.parse(reached[0]!.time)).toBeGreaterThanOrEqual(Date.parse(node.Drain.Deadline));
    const cancelled = events.filter(
      (e) => e.stream === `execution-${running?.ID as string}` && e.type === "ExecutionCancelled",
    );
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.metadata).toMatchObject({
      actor: { type: "workflow", id: "node-drain" },
      reason: `the drain deadline of node ${y} passed`,
      causationId: reached[0]!.id,
    });
    await call("DELETE", `/api/v1/orchestrator/jobs/${service}`);
  }, 120_000);
});
