import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { executionIdOf } from "../../machines/job/job-id.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { MORE_THAN_NEEDED } from "../../src/workflows/jobs/bid-approval.ts";
import type { WorkflowStep } from "../../src/workflows/workflow-host.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents, storedStream } from "../support/stored-events.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * Two-phase dispatch on real components: the orchestrator (real NATS, SQLite, its jobs workflow)
 * asks a compute node for its bid before it runs anything, approves one bid per partition and
 * only then sends RunExecution; compute agents run executions in Docker with the test image.
 */
const docker = new Docker();
const MIB = 1024 * 1024;
const TOKEN = "bid-token";
const suffix = randomUUID().slice(0, 6);
const A = `bid-a-${suffix}`;
const B = `bid-b-${suffix}`;
let image = "";
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let dataDir: string;
const agents = new Map<string, { agent: ComputeAgent; executor: DockerExecutor; dataDir: string }>();
const occupying: string[] = [];

async function startNode(nodeId: string, zone: string, dir = tempDir(`shoal-${nodeId}-`)) {
  const executor = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 2000, memoryBytes: 1024 * MIB },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
  });
  const agent = testAgent({
    nodeId,
    orchestrators: [nats.url],
    token: TOKEN,
    dataDir: dir,
    executor,
    labels: { zone },
  });
  agents.set(nodeId, { agent, executor, dataDir: dir });
  await agent.start();
  return { agent, executor };
}

type Body = Record<string, any>;
async function get(path: string): Promise<Body> {
  const res = await fetch(`${orchestrator.apiUrl}${path}`);
  expect(res.status, path).toBe(200);
  return (await res.json()) as Body;
}

async function nodeReady(nodeId: string): Promise<void> {
  await waitFor(
    async () => {
      const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/${nodeId}`);
      if (res.status !== 200) return false;
      const body = (await res.json()) as Body;
      const node = body.Node ?? body;
      return node.Membership === "APPROVED" && node.Health === "HEALTHY";
    },
    20_000,
    () => `node ${nodeId} approved and healthy`,
  );
}

const job = (command: string, zone: string, type = "batch", timeouts: Record<string, number> = {}, cpu = "250m") => ({
  Type: type,
  Constraints: [{ Key: "zone", Operator: "=", Values: [zone] }],
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
      Resources: { CPU: cpu, Memory: "32Mb" },
      Timeouts: timeouts,
    },
  ],
});
const submit = async (spec: unknown) =>
  (await orchestrator.jobs.submit(spec, commandContext({ type: "operator", id: "test" }))).jobId;

async function settled(jobId: string, states: readonly string[], timeoutMs = 60_000): Promise<Body> {
  let last: Body = {};
  await waitFor(
    async () => {
      last = await get(`/api/v1/orchestrator/jobs/${jobId}?include=executions`);
      return states.includes(last.Job?.State?.StateType);
    },
    timeoutMs,
    () => `job ${jobId} in ${states.join("/")}, last ${JSON.stringify(last.Job?.State)}`,
  );
  return last;
}

const typesOf = async (executionId: string) =>
  (await storedStream(dataDir, `execution-${executionId}`)).map((e) => e.type);
/** The jobs workflow's steps for one execution's events: input type → the commands it issued. */
async function stepsOf(executionId: string): Promise<string[]> {
  const steps = (await storedStream(dataDir, "workflow-jobs")).map((e: RecordedEvent) => e.data as WorkflowStep);
  return steps
    .filter((s) => s.Input.Stream === `execution-${executionId}`)
    .map((s) => `${s.Input.Type} → ${s.Commands.map((c) => c.Type).join(", ")}`);
}
const containersOf = (nodeId: string) =>
  docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });

beforeAll(async () => {
  image = await dockerTestImage();
  nats = await TestNatsServer.start();
  dataDir = tempDir("shoal-bid-orch-");
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, { DataDir: dataDir, "Orchestrator.Auth.Token": TOKEN }),
    silentLogger,
  );
  await startNode(A, "a");
  await startNode(B, "b");
  await nodeReady(A);
  await nodeReady(B);
}, 90_000);

afterEach(async () => {
  for (const id of occupying.splice(0))
    for (const { executor } of agents.values()) await executor.cancel(id, "test over").catch(() => undefined);
});

afterAll(async () => {
  for (const { agent } of agents.values()) await agent.stop();
  await orchestrator?.stop();
  await nats?.stop();
  for (const nodeId of [A, B])
    for (const c of await containersOf(nodeId)) await docker.getContainer(c.Id).remove({ force: true });
});

describe("AskForBid before RunExecution", () => {
  it("a batch execution: the node is asked for its bid, the bid approved, then the node told to run it; an ops one is a direct bid", async () => {
    const jobId = await submit(job("echo two-phase", "a"));
    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Completed");
    const [execution] = got.Executions.Items as Body[];
    expect(execution).toMatchObject({
      NodeID: A,
      ComputeState: { StateType: 9 },
      RunOutput: { Stdout: "two-phase\n", ExitCode: 0 },
    });
    expect(await typesOf(execution!.ID)).toEqual([
      "ExecutionCreated",
      "ExecutionBidAccepted",
      "ExecutionApproved",
      "ExecutionStarted",
      "ExecutionCompleted",
    ]);
    // Why each message went, in the workflow's own record: the ask on creation, the run only after approval.
    expect((await stepsOf(execution!.ID)).slice(0, 3)).toEqual([
      "ExecutionCreated → AskForBid",
      "ExecutionBidAccepted → ApproveBids",
      "ExecutionApproved → RunExecution",
    ]);
    const bid = (await storedStream(dataDir, `execution-${execution!.ID}`))[1]!;
    expect(bid.metadata).toMatchObject({ actor: { type: "node", id: A } });

    const ops = await submit(job("echo direct", "b", "ops"));
    const opsGot = await settled(ops, ["Completed", "Failed"]);
    expect(opsGot.Job.State.StateType).toBe("Completed");
    const [direct] = opsGot.Executions.Items as Body[];
    expect(await typesOf(direct!.ID)).toEqual([
      "ExecutionCreated",
      "ExecutionBidAccepted",
      "ExecutionStarted",
      "ExecutionCompleted",
    ]);
    expect((await stepsOf(direct!.ID))[0]).toBe("ExecutionCreated → RunExecution");
  }, 90_000);

  it("a node that lacks the capacity now declines the bid, running nothing: AskForBidRejected with its reason, and the job does not run there", async () => {
    // Capacity taken on A by something the orchestrator does not count (what a node may hold while a cancelled
    // container stops).
    const { executor } = agents.get(A)!;
    const holder = executionIdOf(randomUUID());
    occupying.push(holder);
    const held = await executor.run({
      executionId: holder,
      image,
      entrypoint: ["sh", "-c"],
      parameters: ["sleep 60"],
      resources: { cpuMillis: 1500, memoryBytes: 64 * MIB },
    });
    expect(await held.started).toBe(true);

    const jobId = await submit(job("echo never", "a", "batch", {}, "1"));
    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Failed");
    expect(got.Job.State.Message).toContain(A);
    const [execution] = got.Executions.Items as Body[];
    const id = execution!.ID as string;
    expect(execution).toMatchObject({
      NodeID: A,
      ComputeState: { StateType: 4 },
      DesiredState: { StateType: 2, Message: "bid rejected" },
    });
    expect(execution!.ComputeState.Message).toBe(
      `node ${A} cannot fit execution ${id} now: it asks for 1000m CPU and 31250KiB memory; free: 500m CPU of 2000m CPU, 960MiB of 1GiB memory (1 running)`,
    );
    expect(await typesOf(id)).toEqual(["ExecutionCreated", "ExecutionBidDeclined"]);
    expect(await stepsOf(id)).toEqual([
      "ExecutionCreated → AskForBid",
      "ExecutionBidDeclined → SettleJob, PlaceQueuedJobs",
    ]);
    // Nothing ran for it: A's only container is the one holding the capacity.
    expect((await containersOf(A)).map((c) => c.Labels["shoal.execution"])).toEqual([holder]);
  }, 90_000);

  it("two accepted bids for one partition lead to one run: one approved, the other rejected (more executions than needed)", async () => {
    // Queued (nothing matches zone c), so that this test places its job's executions itself.
    const jobId = await submit(job("echo once", "c", "batch", { QueueTimeout: 600 }));
    await settled(jobId, ["Queued"], 20_000);
    const ids = [executionIdOf(randomUUID()), executionIdOf(randomUUID())];
    const create = (nodeId: string) => ({
      type: "Create" as const,
      jobId,
      namespace: "default",
      nodeId,
      jobType: "batch" as const,
      jobVersion: 1,
      partitionIndex: 0,
      resources: { CPU: 0.25, Memory: 32_000_000, Disk: 0, GPU: 0 },
      executionTimeout: 0,
      timeoutBuffer: 60,
    });
    const scheduler = commandContext({ type: "system", id: "test-scheduler" });
    await orchestrator.jobs.executions.execute(ids[0]!, create(A), scheduler);
    await orchestrator.jobs.executions.execute(ids[1]!, create(B), scheduler);
    const got = await settled(jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType).toBe("Completed");
    const byState = new Map((got.Executions.Items as Body[]).map((e) => [e.ComputeState.StateType as number, e]));
    const ran = byState.get(9)!;
    const rejected = byState.get(8)!;
    expect(ran.RunOutput).toMatchObject({ Stdout: "once\n" });
    expect(rejected).toMatchObject({ ComputeState: { Message: MORE_THAN_NEEDED }, DesiredState: { StateType: 2 } });
    // Both nodes accepted their bid; only the approved one was told to run.
    expect(await typesOf(rejected.ID)).toEqual(["ExecutionCreated", "ExecutionBidAccepted", "ExecutionRejected"]);
    expect(await typesOf(ran.ID)).toEqual([
      "ExecutionCreated",
      "ExecutionBidAccepted",
      "ExecutionApproved",
      "ExecutionStarted",
      "ExecutionCompleted",
    ]);
    expect((await stepsOf(rejected.ID)).some((s) => s.endsWith("RunExecution"))).toBe(false);
    const started = (await storedEvents(dataDir)).filter(
      (e) => e.type === "ExecutionStarted" && ids.some((id) => e.stream === `execution-${id}`),
    );
    expect(started).toHaveLength(1);
  }, 90_000);
});

describe("resends to a node not listening yet", () => {
  it("the ask (batch) and the run (ops, direct) are sent again until the node, back and listening, answers", async () => {
    const { agent } = agents.get(B)!;
    const dir = agents.get(B)!.dataDir;
    await agent.stop(); // B stays HEALTHY for the orchestrator a while, but hears nothing now
    const batchJob = await submit(job("echo asked-again", "b"));
    const opsJob = await submit(job("echo run-again", "b", "ops"));
    await waitFor(
      async () => (await get(`/api/v1/orchestrator/jobs/${opsJob}/executions`)).Items?.length === 1,
      10_000,
      () => "ops execution placed",
    );
    await new Promise((r) => setTimeout(r, 2500)); // the first messages went to nobody
    await startNode(B, "b", dir);
    for (const [jobId, out] of [
      [batchJob, "asked-again\n"],
      [opsJob, "run-again\n"],
    ] as const) {
      const got = await settled(jobId, ["Completed", "Failed"]);
      expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
      expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: out });
    }
  }, 90_000);
});
