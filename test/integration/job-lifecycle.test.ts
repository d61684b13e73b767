import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { nodeStream } from "../../src/events/streams.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { DEFAULT_EXECUTION_RATE_LIMIT } from "../../src/scheduler/outdated-executions.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, inState, until as untilJob } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { startJoined } from "../support/start-joined.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * A job's life beyond its first placement, on real components: the orchestrator in process with
 * its own NATS, compute agents running executions through the DockerExecutor on the real engine.
 * Each test gets its own nodes, labelled with the test's own value, and its jobs ask for that
 * label: nodes of earlier tests (stopped, deleted) never take them.
 */
const KEY = "lifecycle-key-0123456789abcdefghijk";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const MIB = 1024 * 1024;
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

const spec = (
  type: string,
  suite: string,
  command: string,
  over: Record<string, unknown> = {},
  timeouts: Record<string, number> = {},
) => ({
  ...shellJob(image, command, { type, constraints: [{ Key: "suite", Operator: "=", Values: [suite] }], timeouts }),
  ...over,
});
const submit = (job: unknown) => api.submit(job);
const until = (jobId: string, check: (job: Body) => boolean, what: string, timeoutMs?: number) =>
  untilJob(api, jobId, check, what, timeoutMs);
const COMPLETED = 9;
const FAILED = 10;
const RUNNING = 6;

/** A compute agent labelled suite=<suite>: 1 CPU, 256 MiB. */
async function startNode(suite: string, name: string, again?: { nodeId: string; dataDir: string }): Promise<string> {
  const nodeId = again?.nodeId ?? `${name}-${randomUUID().slice(0, 8)}`;
  if (!nodeIds.includes(nodeId)) nodeIds.push(nodeId);
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
    ...(again === undefined ? {} : { dataDir: again.dataDir }),
  });
  agents.push(agent);
  await startJoined(agent, orchestrator.manager, nodeId);
  return nodeId;
}

beforeAll(async () => {
  image = await dockerTestImage();
  config = await ownNatsOrchestratorConfig("shoal-lifecycle-", { "API.Auth.Users": USERS });
  orchestrator = await startOrchestrator(config, silentLogger);
}, 60_000);

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

afterAll(async () => {
  await orchestrator?.stop();
  await removeContainersOf(...nodeIds);
});

describe("lost executions", () => {
  it("an execution whose node is deleted fails (node has disappeared) and its partition runs on another node", async () => {
    const suite = `lost-${randomUUID().slice(0, 6)}`;
    const first = await startNode(suite, "a");
    const jobId = await submit(spec("batch", suite, "sleep 4; echo done"));
    const running = await until(
      jobId,
      (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING,
      "the first execution running",
    );
    const lost = executionsOf(running)[0] as Body;
    expect(lost.NodeID).toBe(first);
    const second = await startNode(suite, "b");
    await orchestrator.manager.operatorAction(
      "delete",
      first,
      commandContext({ type: "operator", id: "test" }, { reason: "decommissioned" }),
    );
    const got = await until(jobId, inState("Completed", "Failed"), "the job ended");
    expect(got.Job.State.StateType).toBe("Completed");
    const [gone, retry] = executionsOf(got) as [Body, Body];
    expect(gone).toMatchObject({
      ID: lost.ID,
      NodeID: first,
      ComputeState: { StateType: FAILED, Message: "Execution stop requested because node has disappeared" },
    });
    expect(retry).toMatchObject({
      NodeID: second,
      PreviousExecution: lost.ID,
      PartitionIndex: 0,
      ComputeState: { StateType: COMPLETED },
      RunOutput: { Stdout: "done\n" },
    });
    const created = (got.History.Items as Body[]).filter(
      (h) => h.ExecutionID === retry.ID && h.Event.Message.startsWith("Requested execution"),
    );
    expect(created.map((h) => h.Event.Message)).toEqual([
      `Requested execution on ${second} (retry of partition 0: execution ${lost.ID} on node ${first} failed: Execution stop requested because node has disappeared)`,
    ]);
  }, 90_000);
});

describe("top-up of a job placed in part", () => {
  it("a batch job with Count 2 and one matching node runs one now and the other on a node that joins", async () => {
    const suite = `topup-${randomUUID().slice(0, 6)}`;
    const first = await startNode(suite, "a");
    const jobId = await submit(
      spec(
        "batch",
        suite,
        "sleep 1; echo $BACALHAU_PARTITION_INDEX/$BACALHAU_PARTITION_COUNT",
        { Count: 2 },
        { QueueTimeout: 600 },
      ),
    );
    const partial = await until(
      jobId,
      (j) => executionsOf(j).length === 1 && j.Job.State.StateType === "Running",
      "one execution placed, the job Running",
    );
    expect(executionsOf(partial)[0]).toMatchObject({ NodeID: first, PartitionIndex: 0 });
    const second = await startNode(suite, "b");
    const got = await until(jobId, inState("Completed", "Failed"), "the job ended");
    expect(got.Job.State.StateType).toBe("Completed");
    const byPartition = executionsOf(got)
      .map((e) => [e.PartitionIndex ?? 0, e.NodeID, e.RunOutput?.Stdout])
      .sort();
    expect(byPartition).toEqual([
      [0, first, "0/2\n"],
      [1, second, "1/2\n"],
    ]);
  }, 90_000);

  it("past its QueueTimeout a job still short of nodes fails with Bacalhau's reason, its running execution cancelled", async () => {
    const suite = `short-${randomUUID().slice(0, 6)}`;
    await startNode(suite, "a");
    const jobId = await submit(spec("batch", suite, "sleep 30", { Count: 2 }, { QueueTimeout: 3 }));
    await until(
      jobId,
      (j) => executionsOf(j).length === 1 && j.Job.State.StateType === "Running",
      "one execution placed",
    );
    const got = await until(jobId, inState("Failed", "Completed"), "the job failed", 30_000);
    expect(got.Job.State.Message).toMatch(/^not enough nodes to run job\. requested: 1, available: \d+, suitable: 0\./);
    const cancelled = await until(
      jobId,
      (j) => executionsOf(j)[0]?.ComputeState?.StateType === 11,
      "its execution cancelled",
      10_000,
    );
    expect(executionsOf(cancelled)[0]?.ComputeState?.Message).toBe("Execution stopped due to job failure");
  }, 60_000);
});

describe("the executions one evaluation creates", () => {
  it("are at most 20 (Bacalhau's MaxExecutionsPerEval): an ops job on 21 nodes gets its 21st from the next evaluation, which says why", async () => {
    const suite = `limit-${randomUUID().slice(0, 6)}`;
    const nodes: string[] = [];
    for (let i = 0; i < DEFAULT_EXECUTION_RATE_LIMIT.maxPerEval + 1; i++) nodes.push(await startNode(suite, `n${i}`));
    // Silent from here (HEALTHY until their heartbeats are missed): placed on, they run nothing, so no container is
    // started.
    for (const a of agents.splice(0)) await a.stop();
    const jobId = await submit(spec("ops", suite, "echo never"));
    const placed = await until(jobId, (j) => executionsOf(j).length === nodes.length, "an execution on every node");
    expect(new Set(executionsOf(placed).map((e) => e.NodeID))).toEqual(new Set(nodes));
    const db = new Database(join(config.DataDir, "shoal.db"), { readonly: true });
    try {
      const ids = executionsOf(placed).map((e) => `execution-${e.ID as string}`);
      const reasons = ids.map((stream) => {
        const row = db
          .prepare("SELECT metadata FROM events WHERE stream = ? AND type = 'ExecutionCreated'")
          .get(stream) as { metadata: string };
        return (JSON.parse(row.metadata) as { reason?: string }).reason;
      });
      expect(reasons.filter((r) => r === "the job was submitted")).toHaveLength(
        DEFAULT_EXECUTION_RATE_LIMIT.maxPerEval,
      );
      expect(
        reasons.filter(
          (r) => r === `1 more executions to place (at most ${DEFAULT_EXECUTION_RATE_LIMIT.maxPerEval} per evaluation)`,
        ),
      ).toHaveLength(1);
    } finally {
      db.close();
    }
    expect(await api.stop(jobId, "done")).toMatchObject({ status: 200 });
  }, 120_000);
});

describe("a job waiting for its node's bid", () => {
  it("stays Pending until a bid is approved; stopped meanwhile, its execution is cancelled with Bacalhau's reason", async () => {
    const suite = `bid-${randomUUID().slice(0, 6)}`;
    const nodeId = await startNode(suite, "mute");
    // The node stays HEALTHY until its heartbeats are missed, so it is placed on, but nothing answers the ask for its
    // bid.
    await agents.splice(0)[0]!.stop();
    const jobId = await submit(spec("batch", suite, "echo never"));
    const placed = await until(jobId, (j) => executionsOf(j).length === 1, "one execution placed");
    expect(executionsOf(placed)[0]).toMatchObject({ NodeID: nodeId, DesiredState: { StateType: 0 } });
    expect(placed.Job.State.StateType).toBe("Pending");
    expect(await api.stop(jobId, "no answer")).toMatchObject({ status: 200 });
    const stopped = await until(
      jobId,
      (j) => executionsOf(j)[0]?.ComputeState?.StateType === 11,
      "its execution cancelled",
      10_000,
    );
    expect(stopped.Job.State).toMatchObject({ StateType: "Stopped", Message: "no answer" });
    expect(executionsOf(stopped)[0]?.ComputeState?.Message).toBe(
      "Execution stop requested because job has been stopped",
    );
    expect((stopped.History.Items as Body[]).filter((h) => h.Type === "JobLevel").map((h) => h.JobState.New)).toEqual([
      "Pending",
      "Stopped",
    ]);
  }, 60_000);
});

describe("retries", () => {
  it("a batch job failing everywhere is retried at most twice per node, then fails naming its last failure and exit code", async () => {
    const suite = `fail-${randomUUID().slice(0, 6)}`;
    const nodes = [await startNode(suite, "a"), await startNode(suite, "b")];
    const jobId = await submit(spec("batch", suite, "echo no >&2; exit 3"));
    const got = await until(jobId, inState("Failed", "Completed"), "the job failed");
    const executions = executionsOf(got) as [Body, Body, ...Body[]];
    expect(executions).toHaveLength(4);
    for (const nodeId of nodes) expect(executions.filter((e) => e.NodeID === nodeId)).toHaveLength(2);
    expect(executions.every((e) => e.ComputeState.StateType === FAILED && e.RunOutput?.ExitCode === 3)).toBe(true);
    // A retry goes to another node first.
    expect(executions[0].NodeID).not.toBe(executions[1].NodeID);
    const ids = new Set(executions.map((e) => e.ID));
    expect(ids.size).toBe(4);
    const message = got.Job.State.Message as string;
    expect(message).toMatch(/^not enough nodes to run job\. requested: 1, available: \d+, suitable: 0\./);
    expect(message).toContain("job already executed on this node more than once");
    const lastFailed = [...executions].sort((a, b) => a.ModifyTime - b.ModifyTime).at(-1) as Body;
    expect(message).toContain(
      `Last failure: execution ${lastFailed.ID} on node ${lastFailed.NodeID} failed: the command exited with code 3`,
    );
    // Every retry is in the history with why.
    const retries = (got.History.Items as Body[]).filter(
      (h) => h.Event.Message.startsWith("Requested execution") && h.Event.Details.PreviousExecution,
    );
    expect(retries).toHaveLength(3);
    for (const r of retries) expect(r.Event.Message).toContain("the command exited with code 3");
  }, 90_000);

  it("a service whose execution ends is replaced; with no node left it fails with execution completed unexpectedly", async () => {
    const suite = `svc-${randomUUID().slice(0, 6)}`;
    const only = await startNode(suite, "a");
    const jobId = await submit(spec("service", suite, "echo up"));
    const got = await until(jobId, inState("Failed", "Stopped"), "the service failed");
    const executions = executionsOf(got) as [Body, Body];
    expect(executions.map((e) => [e.NodeID, e.ComputeState.StateType, e.ComputeState.Message])).toEqual([
      [only, FAILED, "execution completed unexpectedly"],
      [only, FAILED, "execution completed unexpectedly"],
    ]);
    expect(executions[1].PreviousExecution).toBe(executions[0].ID);
    expect(got.Job.State.Message).toContain(
      `Last failure: execution ${executions[1].ID} on node ${only} failed: execution completed unexpectedly (exit code 0)`,
    );
  }, 60_000);
});

describe("long-running jobs on nodes that come later", () => {
  it("a daemon job lands on a matching node that joins later and keeps running; stopping it stops both", async () => {
    const suite = `daemon-${randomUUID().slice(0, 6)}`;
    const first = await startNode(suite, "a");
    const jobId = await submit(spec("daemon", suite, "sleep 600"));
    await until(
      jobId,
      (j) => executionsOf(j).some((e) => e.ComputeState.StateType === RUNNING),
      "running on the first node",
    );
    const second = await startNode(suite, "b");
    const both = await until(
      jobId,
      (j) => executionsOf(j).filter((e) => e.ComputeState.StateType === RUNNING).length === 2,
      "running on both nodes",
    );
    expect(
      executionsOf(both)
        .map((e) => e.NodeID)
        .sort(),
    ).toEqual([first, second].sort());
    expect(both.Job.State.StateType).toBe("Running");
    expect((await api.stop(jobId, "done")).status).toBe(200);
    await until(jobId, (j) => executionsOf(j).every((e) => e.ComputeState.StateType === 11), "both cancelled", 20_000);
  }, 60_000);
});

describe("ops jobs on nodes that come later", () => {
  it("an ops job gives a node that joins while it runs an execution of its own, and completes once both ended", async () => {
    const suite = `ops-${randomUUID().slice(0, 6)}`;
    const first = await startNode(suite, "a");
    const jobId = await submit(spec("ops", suite, "sleep 3; echo $BACALHAU_JOB_TYPE"));
    await until(jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING, "running on the first node");
    const second = await startNode(suite, "b");
    const got = await until(jobId, inState("Completed", "Failed"), "the ops job ended");
    expect(got.Job.State.StateType).toBe("Completed");
    expect(
      executionsOf(got)
        .map((e) => [e.NodeID, e.ComputeState.StateType, e.RunOutput?.Stdout])
        .sort(),
    ).toEqual(
      [
        [first, COMPLETED, "ops\n"],
        [second, COMPLETED, "ops\n"],
      ].sort(),
    );
  }, 60_000);

  it("a daemon job gets an execution on a node whose labels change to match it", async () => {
    const suite = `relabel-${randomUUID().slice(0, 6)}`;
    const first = await startNode(suite, "a");
    const dataDir = tempDir("shoal-relabel-");
    const other = await startNode(`${suite}-other`, "b", { nodeId: `b-${randomUUID().slice(0, 8)}`, dataDir });
    const jobId = await submit(spec("daemon", suite, "sleep 600"));
    await until(
      jobId,
      (j) => executionsOf(j).some((e) => e.ComputeState.StateType === RUNNING),
      "running on the matching node",
    );
    // The other node comes back with the label the job asks for.
    const index = agents.length - 1;
    await agents[index]?.stop();
    agents.splice(index, 1);
    await startNode(suite, "b", { nodeId: other, dataDir });
    const both = await until(
      jobId,
      (j) => executionsOf(j).filter((e) => e.ComputeState.StateType === RUNNING).length === 2,
      "running on the relabelled node too",
    );
    expect(
      executionsOf(both)
        .map((e) => e.NodeID)
        .sort(),
    ).toEqual([first, other].sort());
    expect((await api.stop(jobId, "done")).status).toBe(200);
    await until(jobId, (j) => executionsOf(j).every((e) => e.ComputeState.StateType === 11), "both cancelled", 20_000);
  }, 60_000);
});

describe("lost executions across a restart", () => {
  it("a node deleted while the orchestrator is down: on restart its execution is lost and retried on another node", async () => {
    const suite = `restart-${randomUUID().slice(0, 6)}`;
    const first = await startNode(suite, "a");
    const jobId = await submit(spec("batch", suite, "sleep 8; echo done"));
    const running = await until(
      jobId,
      (j) => executionsOf(j)[0]?.ComputeState?.StateType === RUNNING,
      "running on the first node",
    );
    const lost = executionsOf(running)[0] as Body;
    const second = await startNode(suite, "b");
    // The first node goes away with the orchestrator; another writer on the same store deletes it meanwhile.
    await agents[0]?.stop();
    agents.splice(0, 1);
    await orchestrator.stop();
    const store = new SqliteEventStore(join(config.DataDir, "shoal.db"));
    try {
      const now = new Date().toISOString();
      const id = randomUUID();
      await store.append(
        nodeStream(first),
        [
          {
            id,
            type: "NodeDeleted",
            data: { NodeID: first, Membership: "APPROVED" },
            metadata: {
              time: now,
              actor: { type: "operator", id: "test" },
              reason: "decommissioned",
              correlationId: id,
              causationId: id,
              schemaVersion: 1,
            },
          },
        ],
        "any",
      );
    } finally {
      await store.close();
    }
    orchestrator = await startOrchestrator(config, silentLogger);
    const got = await until(jobId, inState("Completed", "Failed"), "the job ended", 60_000);
    expect(got.Job.State.StateType).toBe("Completed");
    const [gone, retry] = executionsOf(got);
    expect(gone).toMatchObject({
      ID: lost.ID,
      NodeID: first,
      ComputeState: { StateType: FAILED, Message: "Execution stop requested because node has disappeared" },
    });
    expect(retry).toMatchObject({
      NodeID: second,
      PreviousExecution: lost.ID,
      ComputeState: { StateType: COMPLETED },
      RunOutput: { Stdout: "done\n" },
    });
  }, 120_000);
});

describe("capacity", () => {
  it("jobs submitted at once never overbook a node, and after a restart its running executions still hold its capacity", async () => {
    const suite = `capacity-${randomUUID().slice(0, 6)}`;
    await startNode(suite, "c");
    // One CPU: four executions of 250m fit, two more do not (no QueueTimeout: they fail at once).
    const ids = await Promise.all(Array.from({ length: 6 }, () => submit(spec("batch", suite, "sleep 120"))));
    const placedOrFailed = (j: Body) => inState("Failed")(j) || executionsOf(j).length > 0;
    const jobs = await Promise.all(ids.map((id) => until(id, placedOrFailed, "placed or failed")));
    const placed = jobs.filter((j) => executionsOf(j).length > 0);
    const failed = jobs.filter(inState("Failed"));
    expect(placed).toHaveLength(4);
    expect(failed).toHaveLength(2);
    for (const j of failed)
      expect(j.Job.State.Message).toMatch(
        /^not enough nodes to run job\. requested: 1, available: \d+, suitable: 0\.[^]*node busy with available capacity \{CPU: 0\.00,/,
      );
    await Promise.all(
      placed.map((j) => until(j.Job.ID, (now) => executionsOf(now)[0]?.ComputeState?.StateType === RUNNING, "running")),
    );
    // A restart rebuilds the ledger from the stored executions: the node is still full.
    await orchestrator.stop();
    orchestrator = await startOrchestrator(config, silentLogger);
    const late = await submit(spec("batch", suite, "sleep 120"));
    const refused = await until(late, inState("Failed"), "the job after the restart failed for want of capacity");
    expect(refused.Job.State.Message).toMatch(/node busy with available capacity \{CPU: 0\.00,/);
    for (const j of placed)
      expect((await api.call("DELETE", `/api/v1/orchestrator/jobs/${j.Job.ID as string}`)).status).toBe(200);
  }, 120_000);
});
