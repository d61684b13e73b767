import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";
import { startJoined } from "../support/start-joined.ts";
import { storedEvents } from "../support/stored-events.ts";
import { testAgent } from "../support/test-agent.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, until as untilJob } from "../support/job-waits.ts";
import { RESEND_MS } from "../../src/workflows/jobs/work-resends.ts";

/**
 * Drains on real components: the orchestrator in process (its SQLite store, its NATS), compute
 * agents running executions in real containers. The orchestrator's clock is a manual one: a
 * drain's deadline passes when the test moves it, not after a sleep (agents keep real time;
 * health timeouts are set far beyond any move, so no node turns unhealthy meanwhile).
 */
const KEY = "drain-key-0123456789abcdefghijklmnop";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const MIB = 1024 * 1024;
const DRAIN_ACTOR = { type: "workflow", id: "node-drain" };
const docker = new Docker();
const clock = new ManualClock(Date.now());
let image = "";
let orchestrator: RunningOrchestrator;
let config: ShoalConfig;
const agents: ComputeAgent[] = [];
const nodeIds: string[] = [];

const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
const call = (method: string, path: string, body?: unknown) => api.call(method, path, body);

function spec(type: string, suite: string, command: string, over: Record<string, unknown> = {}) {
  return {
    Type: type,
    Constraints: [{ Key: "suite", Operator: "=", Values: [suite] }],
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
        Resources: { CPU: "100m", Memory: "16Mb" },
      },
    ],
    ...over,
  };
}

const submit = (job: unknown) => api.submit(job);
const jobNow = (jobId: string) => api.job(jobId);
const until = (jobId: string, check: (job: Body) => boolean, what: string, timeoutMs?: number) =>
  untilJob(api, jobId, check, what, timeoutMs);

const RUNNING = 6;
const COMPLETED = 9;
const CANCELLED = 11;
const on = (job: Body, nodeId: string, state?: number) =>
  executionsOf(job).filter((e) => e.NodeID === nodeId && (state === undefined || e.ComputeState?.StateType === state));

/**
 * The dispatch sends work again on the orchestrator's clock, which only the test moves: work placed on a node that has
 * only just joined, before its own NATS login listens, is lost until then. A check that moves the clock one resend on,
 * at most once a second and twenty times (40 s of clock, far short of any drain deadline or health timeout here).
 */
function resendsGo(): () => void {
  let last = Date.now();
  let moves = 0;
  return () => {
    if (moves >= 20 || Date.now() - last < 1_000) return;
    last = Date.now();
    moves++;
    void clock.advance(RESEND_MS);
  };
}

async function startNode(suite: string, name: string): Promise<string> {
  const nodeId = `${name}-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const executor = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
  });
  const agent = testAgent({
    nodeId,
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    labels: { suite },
    executor,
    resourceUpdateMs: 200,
  });
  agents.push(agent);
  await startJoined(agent, orchestrator.manager, nodeId);
  return nodeId;
}

const drain = (nodeId: string, body: Record<string, unknown>) =>
  call("PUT", `/api/v1/orchestrator/nodes/${nodeId}`, { Action: "drain", ...body });
const nodeNow = async (nodeId: string): Promise<Body> =>
  (await call("GET", `/api/v1/orchestrator/nodes/${nodeId}`)).body.Node as Body;

async function drainEnds(nodeId: string, status = "drained"): Promise<Body> {
  let last: Body = {};
  await waitFor(
    async () => (last = await nodeNow(nodeId)).Drain?.Status === status,
    60_000,
    () => `node ${nodeId} ${status}; now ${JSON.stringify(last.Drain)}`,
  );
  return last;
}

const stored = () => storedEvents(config.DataDir);
const ofStream = (events: RecordedEvent[], stream: string, type?: string) =>
  events.filter((e) => e.stream === stream && (type === undefined || e.type === type));
const one = (events: RecordedEvent[], stream: string, type: string): RecordedEvent => {
  const found = ofStream(events, stream, type);
  expect(found, `${type} in ${stream}`).toHaveLength(1);
  return found[0] as RecordedEvent;
};

beforeAll(async () => {
  image = await dockerTestImage();
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-drain-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.TLS.Disable": true, // TLS is not under test here
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "API.Auth.Users": USERS,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NodeManager.DisconnectTimeout": 24 * 3_600_000,
    "Orchestrator.NodeManager.UnknownTimeout": 48 * 3_600_000,
  };
  orchestrator = await startOrchestrator(config, silentLogger, { clock });
}, 60_000);

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

afterAll(async () => {
  await orchestrator?.stop();
  for (const nodeId of nodeIds) {
    for (const c of await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } }))
      await docker.getContainer(c.Id).remove({ force: true });
  }
});

describe("a drain", () => {
  it("moves a running batch execution to another node: the job completes there; the drain is recorded with who, when and why", async () => {
    const suite = `batch-${randomUUID().slice(0, 6)}`;
    const nodes = [await startNode(suite, "a"), await startNode(suite, "b")];
    const jobId = await submit(spec("batch", suite, "sleep 3; echo done"));
    const running = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING, "running");
    const first = executionsOf(running)[0] as Body;
    const drained = first.NodeID as string;
    const other = nodes.find((n) => n !== drained) as string;

    expect(await drain(drained, { Deadline: "10m", Message: "kernel upgrade" })).toMatchObject({ status: 200 });
    const got = await until(jobId, (j) => j.Job?.State?.StateType === "Completed", "the job completed elsewhere");
    expect(on(got, drained)).toMatchObject([
      {
        ID: first.ID,
        ComputeState: {
          StateType: CANCELLED,
          Message: `node ${drained} is draining: the execution is stopped and its partition placed on another node`,
        },
      },
    ]);
    expect(on(got, other)).toMatchObject([
      {
        PreviousExecution: first.ID,
        PartitionIndex: 0,
        ComputeState: { StateType: COMPLETED },
        RunOutput: { Stdout: "done\n" },
      },
    ]);

    const node = await drainEnds(drained);
    expect(node.Drain).toMatchObject({
      Status: "drained",
      KeepDaemon: false,
      Reason: "kernel upgrade",
      By: { type: "operator", id: "ops" },
    });
    // The list filters on it: a drained node with the drained ones, the other with those never drained.
    const listed = async (q: string) =>
      ((await call("GET", `/api/v1/orchestrator/nodes?${q}&limit=10000`)).body.Nodes as Body[]).map(
        (n) => n.Info.NodeID as string,
      );
    expect(await listed("filter-drain=drained")).toContain(drained);
    expect(await listed("filter-drain=drained")).not.toContain(other);
    expect(await listed("filter-drain=none")).toContain(other);
    expect(await listed("filter-drain=none")).not.toContain(drained);
    expect((await call("GET", "/api/v1/orchestrator/nodes?filter-drain=soon")).status).toBe(400);
    expect(Date.parse(node.Drain.Deadline) - Date.parse(node.Drain.StartedAt)).toBe(600_000);

    const events = await stored();
    const started = one(events, `node-${drained}`, "NodeDrainStarted");
    expect(started.metadata).toMatchObject({ actor: { type: "operator", id: "ops" }, reason: "kernel upgrade" });
    expect(one(events, `node-${drained}`, "NodeDrainCompleted")).toMatchObject({
      data: { DaemonStopped: 0 },
      metadata: { actor: DRAIN_ACTOR },
    });
    const cancelled = one(events, `execution-${first.ID as string}`, "ExecutionCancelled");
    expect(cancelled.metadata.actor).toEqual(DRAIN_ACTOR);
    // The workflow's step: the drain's input and the command it issued, recorded before it acted.
    const step = ofStream(events, "workflow-node-drain").find((e) => (e.data as Body).Input.EventID === started.id);
    expect(step?.data).toMatchObject({
      Commands: [
        {
          Handler: "node-drain",
          EntityID: drained,
          Type: "MoveDrainedWork",
          Reason: `node ${drained} is draining: kernel upgrade`,
        },
      ],
    });
    expect(cancelled.metadata.causationId).toBe(started.id);

    // Drained, the node takes no new work: a Count 2 job finds one node, and the shortfall names the drain.
    const short = await submit(spec("batch", suite, "echo x", { Count: 2 }));
    const failed = await until(short, (j) => j.Job?.State?.StateType === "Failed", "the job failed for want of nodes");
    expect(failed.Job.State.Message).toContain(`node is drained`);
    expect(executionsOf(failed).every((e) => e.NodeID !== drained)).toBe(true);
  }, 120_000);

  it("leaves a batch execution running while no other node can take it, and moves it once one joins", async () => {
    const suite = `stay-${randomUUID().slice(0, 6)}`;
    const drained = await startNode(suite, "a");
    const jobId = await submit(spec("batch", suite, "sleep 4; echo done"));
    const running = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING, "running");
    const first = executionsOf(running)[0] as Body;
    expect(await drain(drained, { Deadline: "10m" })).toMatchObject({ status: 200 });
    expect((await nodeNow(drained)).Drain).toMatchObject({ Status: "draining" });
    // Nowhere to go: stopping it would fail the job (no node left), so it runs on.
    const other = await startNode(suite, "b");
    // The drain moves the execution the moment b joins: b may not listen yet, and only a resend reaches it.
    const resend = resendsGo();
    const got = await until(
      jobId,
      (j) => {
        resend();
        return j.Job?.State?.StateType === "Completed";
      },
      "the job completed",
    );
    const moved = on(got, other);
    const stayed = on(got, drained);
    // Either it moved once the other node joined, or it had finished first: never a Failed job.
    if (moved.length > 0) expect(stayed).toMatchObject([{ ID: first.ID, ComputeState: { StateType: CANCELLED } }]);
    else expect(stayed).toMatchObject([{ ID: first.ID, ComputeState: { StateType: COMPLETED } }]);
    await drainEnds(drained);
  }, 120_000);

  it("runs a batch execution with nowhere to go to its end: the job completes, the drain with it", async () => {
    const suite = `alone-${randomUUID().slice(0, 6)}`;
    const drained = await startNode(suite, "a");
    const jobId = await submit(spec("batch", suite, "sleep 2; echo done"));
    const running = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING, "running");
    expect(await drain(drained, { Deadline: "10m" })).toMatchObject({ status: 200 });
    const got = await until(jobId, (j) => ["Completed", "Failed"].includes(j.Job?.State?.StateType), "the job ended");
    expect(got.Job.State.StateType).toBe("Completed");
    expect(executionsOf(got)).toMatchObject([
      {
        ID: executionsOf(running)[0]?.ID,
        NodeID: drained,
        ComputeState: { StateType: COMPLETED },
        RunOutput: { Stdout: "done\n" },
      },
    ]);
    expect(await drainEnds(drained)).toMatchObject({ Drain: { Status: "drained" } });
  }, 120_000);

  it("starts a service's replacement on another node before it stops the original", async () => {
    const suite = `service-${randomUUID().slice(0, 6)}`;
    const nodes = [await startNode(suite, "a"), await startNode(suite, "b")];
    const jobId = await submit(spec("service", suite, "sleep 3600"));
    const running = await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING, "running");
    const original = executionsOf(running)[0] as Body;
    const drained = original.NodeID as string;
    const other = nodes.find((n) => n !== drained) as string;

    expect(await drain(drained, { Deadline: "10m" })).toMatchObject({ status: 200 });
    const moved = await until(
      jobId,
      (j) => on(j, other, RUNNING).length === 1 && on(j, drained, CANCELLED).length === 1,
      "the replacement running, the original stopped",
    );
    const replacement = on(moved, other, RUNNING)[0] as Body;
    expect(replacement).toMatchObject({ PartitionIndex: 0, PreviousExecution: original.ID });
    expect(on(moved, drained)[0]?.ComputeState?.Message).toBe(
      `node ${drained} is draining: replaced by ${replacement.ID as string} on node ${other}, which is running`,
    );
    expect(moved.Job.State.StateType).toBe("Running");
    await drainEnds(drained);

    const events = await stored();
    const replacementStarted = one(events, `execution-${replacement.ID as string}`, "ExecutionStarted");
    const originalStopped = one(events, `execution-${original.ID as string}`, "ExecutionCancelled");
    expect(replacementStarted.position).toBeLessThan(originalStopped.position);
    expect(one(events, `execution-${replacement.ID as string}`, "ExecutionCreated").metadata).toMatchObject({
      actor: DRAIN_ACTOR,
      reason: `replacement of partition 0: ${original.ID as string} runs on node ${drained}, which is draining`,
    });
    expect(originalStopped.metadata.actor).toEqual(DRAIN_ACTOR);
    expect(await call("DELETE", `/api/v1/orchestrator/jobs/${jobId}`)).toMatchObject({ status: 200 });
  }, 120_000);

  it("lets ops work finish on the draining node, then stops its daemon work at the end", async () => {
    const suite = `ops-${randomUUID().slice(0, 6)}`;
    const [x, y] = [await startNode(suite, "a"), await startNode(suite, "b")] as [string, string];
    const daemon = await submit(spec("daemon", suite, "sleep 3600"));
    await until(
      daemon,
      (j) => on(j, x, RUNNING).length === 1 && on(j, y, RUNNING).length === 1,
      "the daemon running on both",
    );
    const ops = await submit(spec("ops", suite, "sleep 3; echo ok"));
    await until(ops, (j) => on(j, x, RUNNING).length === 1, "the ops execution running on x");

    expect(await drain(x, { Deadline: "10m" })).toMatchObject({ status: 200 });
    const finished = await until(ops, (j) => j.Job?.State?.StateType === "Completed", "the ops job completed");
    expect(on(finished, x)).toMatchObject([{ ComputeState: { StateType: COMPLETED }, RunOutput: { Stdout: "ok\n" } }]);
    const node = await drainEnds(x);
    expect(node.Drain.Status).toBe("drained");
    const d = await until(daemon, (j) => on(j, x, CANCELLED).length === 1, "the daemon stopped on x");
    expect(on(d, x)[0]?.ComputeState?.Message).toBe(
      `Execution stopped: node ${x} is drained: its daemon work stops at the end`,
    );
    expect(on(d, y, RUNNING)).toHaveLength(1);

    const events = await stored();
    const opsDone = one(events, `execution-${on(finished, x)[0]?.ID as string}`, "ExecutionCompleted");
    const daemonStopped = one(events, `execution-${on(d, x)[0]?.ID as string}`, "ExecutionCancelled");
    expect(opsDone.position).toBeLessThan(daemonStopped.position);
    expect(one(events, `node-${x}`, "NodeDrainCompleted").data).toEqual({ NodeID: x, DaemonStopped: 1 });
    // Drained, it gets no new daemon execution; undrained, it does (its stopped one released it).
    expect(on(await jobNow(daemon), x)).toHaveLength(1);
    expect(await call("PUT", `/api/v1/orchestrator/nodes/${x}`, { Action: "undrain" })).toMatchObject({ status: 200 });
    const back = await until(
      daemon,
      (j) => on(j, x, RUNNING).length === 1,
      "a new daemon execution on x once undrained",
    );
    expect(on(back, x).map((e) => e.ComputeState.StateType)).toEqual([CANCELLED, RUNNING]);
    expect(await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).toMatchObject({ status: 200 });
  }, 120_000);

  it("keeps daemon work with KeepDaemon", async () => {
    const suite = `keep-${randomUUID().slice(0, 6)}`;
    const x = await startNode(suite, "a");
    const daemon = await submit(spec("daemon", suite, "sleep 3600"));
    await until(daemon, (j) => on(j, x, RUNNING).length === 1, "the daemon running");
    expect(await drain(x, { Deadline: "10m", KeepDaemon: true })).toMatchObject({ status: 200 });
    const node = await drainEnds(x);
    expect(node.Drain.KeepDaemon).toBe(true);
    expect(on(await jobNow(daemon), x, RUNNING)).toHaveLength(1);
    expect(one(await stored(), `node-${x}`, "NodeDrainCompleted").data).toEqual({ NodeID: x, DaemonStopped: 0 });
    expect(await call("DELETE", `/api/v1/orchestrator/jobs/${daemon}`)).toMatchObject({ status: 200 });
  }, 120_000);

  it("at its deadline stops what is left and says what that was", async () => {
    const suite = `deadline-${randomUUID().slice(0, 6)}`;
    const x = await startNode(suite, "a");
    const jobId = await submit(spec("service", suite, "sleep 3600"));
    const running = await until(jobId, (j) => on(j, x, RUNNING).length === 1, "running");
    const original = on(running, x)[0] as Body;

    expect(await drain(x, { Deadline: "5m", Message: "rack move" })).toMatchObject({ status: 200 });
    // No other node: the replacement finds none, the original runs on and the job does not fail.
    await waitFor(
      async () =>
        ofStream(await stored(), "workflow-node-drain").some((e) => (e.data as Body).Commands[0]?.EntityID === x),
      10_000,
      () => "the drain's step",
    );
    // What is left, as the orchestrator counts it (the node's resource report may be older), on a node and in the list.
    expect((await nodeNow(x)).Drain).toMatchObject({ Status: "draining", ExecutionsLeft: 1 });
    const listed = (await call("GET", `/api/v1/orchestrator/nodes?labels=suite=${suite}`)).body.Nodes as Body[];
    expect(listed.map((n) => n.Drain)).toMatchObject([{ Status: "draining", ExecutionsLeft: 1 }]);
    // As of a past moment nothing is live: the drain as it was, without a count.
    const started = one(await stored(), `node-${x}`, "NodeDrainStarted");
    const past = (await call("GET", `/api/v1/orchestrator/nodes/${x}?at_position=${started.position}`)).body
      .Node as Body;
    expect(past.Drain.Status).toBe("draining");
    expect(past.Drain).not.toHaveProperty("ExecutionsLeft");
    expect((await jobNow(jobId)).Job.State.StateType).toBe("Running");

    await clock.advance(5 * 60_000 + 1);
    const node = await drainEnds(x, "expired");
    expect(node.Drain.Left).toBe(1);
    expect(node.Drain).not.toHaveProperty("ExecutionsLeft");
    const stopped = await until(jobId, (j) => on(j, x, CANCELLED).length === 1, "the original stopped");
    expect(on(stopped, x)[0]?.ComputeState?.Message).toBe(`the drain deadline of node ${x} passed`);

    const events = await stored();
    const reached = one(events, `node-${x}`, "NodeDrainDeadlineReached");
    expect(reached.data).toEqual({
      NodeID: x,
      Deadline: node.Drain.Deadline,
      Left: [{ ExecutionID: original.ID, JobID: jobId, JobType: "service" }],
    });
    expect(reached.metadata).toMatchObject({
      actor: DRAIN_ACTOR,
      reason: `the drain deadline ${node.Drain.Deadline as string} passed with 1 execution left`,
    });
    const step = ofStream(events, "workflow-node-drain").find((e) => (e.data as Body).Input.EventID === reached.id);
    expect(step?.data).toMatchObject({ Commands: [{ EntityID: original.ID, Type: "StopDrainedExecution" }] });
    expect(one(events, `execution-${original.ID as string}`, "ExecutionCancelled").metadata).toMatchObject({
      actor: DRAIN_ACTOR,
      causationId: reached.id,
    });
    await call("DELETE", `/api/v1/orchestrator/jobs/${jobId}`);
  }, 120_000);

  it("ended by an undrain while its work waits: nothing is stopped, the deadline no longer fires, the node takes work again", async () => {
    const suite = `undrain-${randomUUID().slice(0, 6)}`;
    const x = await startNode(suite, "a");
    const jobId = await submit(spec("service", suite, "sleep 3600"));
    const running = await until(jobId, (j) => on(j, x, RUNNING).length === 1, "running");
    expect(await drain(x, { Deadline: "5m" })).toMatchObject({ status: 200 });
    await waitFor(
      async () =>
        ofStream(await stored(), "workflow-node-drain").some((e) => (e.data as Body).Commands[0]?.EntityID === x),
      10_000,
      () => "the drain's step",
    );
    expect(
      await call("PUT", `/api/v1/orchestrator/nodes/${x}`, { Action: "undrain", Message: "maintenance postponed" }),
    ).toMatchObject({ status: 200 });
    expect((await nodeNow(x)).Drain).toBeUndefined();

    await clock.advance(10 * 60_000);
    const events = await stored();
    expect(ofStream(events, `node-${x}`, "NodeDrainDeadlineReached")).toHaveLength(0);
    expect(one(events, `node-${x}`, "NodeUndrained")).toMatchObject({
      data: { Previous: "draining" },
      metadata: { actor: { type: "operator", id: "ops" }, reason: "maintenance postponed" },
    });
    const now = await jobNow(jobId);
    expect(executionsOf(now)).toMatchObject([{ ID: on(running, x)[0]?.ID, ComputeState: { StateType: RUNNING } }]);
    const again = await submit(spec("batch", suite, "echo back"));
    const done = await until(
      again,
      (j) => j.Job?.State?.StateType === "Completed",
      "a new job completed on the undrained node",
    );
    expect(on(done, x, COMPLETED)).toHaveLength(1);
    await call("DELETE", `/api/v1/orchestrator/jobs/${jobId}`);
  }, 120_000);

  it("refuses a bad deadline and drain fields on other actions, changing nothing; undrain ends it", async () => {
    const suite = `api-${randomUUID().slice(0, 6)}`;
    const x = await startNode(suite, "a");
    expect(await drain(x, { Deadline: "ten minutes" })).toMatchObject({ status: 400 });
    expect(await drain(x, { Deadline: "0s" })).toMatchObject({ status: 400 });
    expect(await call("PUT", `/api/v1/orchestrator/nodes/${x}`, { Action: "approve", Deadline: "10m" })).toMatchObject({
      status: 400,
    });
    expect((await nodeNow(x)).Drain).toBeUndefined();
    expect(await call("PUT", `/api/v1/orchestrator/nodes/${x}`, { Action: "undrain" })).toMatchObject({ status: 409 });
    expect(await drain(x, {})).toMatchObject({ status: 200 });
    const node = await drainEnds(x);
    // Nomad's default deadline: an hour.
    expect(Date.parse(node.Drain.Deadline) - Date.parse(node.Drain.StartedAt)).toBe(3_600_000);
    expect(await call("PUT", `/api/v1/orchestrator/nodes/${x}`, { Action: "undrain", Message: "done" })).toMatchObject({
      status: 200,
    });
    expect((await nodeNow(x)).Drain).toBeUndefined();
  }, 60_000);
});
