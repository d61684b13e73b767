import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { connect, type NatsConnection } from "nats";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ExecutionReportHandler } from "../../src/actors/execution-report-handler.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { KnownExecutions } from "../../src/compute/known-executions.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { ProtocolError, decode, encode } from "../../src/transport/codec.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import { executionReportSubject, executionWorkSubject } from "../../src/transport/subjects.ts";
import type { WorkTask } from "../../src/transport/work-messages.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { RecordingExecutionReports } from "../support/recording-execution-reports.ts";
import { waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * The work protocol end to end on real components: a real nats-server, the orchestrator (whose
 * node protocol handler shares the subjects), the execution report handler handing reports to a
 * recording port, a compute agent running executions through the DockerExecutor on the real
 * engine with the test image.
 */
const docker = new Docker();
const MIB = 1024 * 1024;
const TOKEN = "work-token";
let image = "";
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let reports: RecordingExecutionReports;
let handler: ExecutionReportHandler;
let work: NodeWorkClient;
const nodeIds: string[] = [];
const agents: ComputeAgent[] = [];

function task(command: string, overrides: Partial<WorkTask> = {}): WorkTask {
  return {
    Engine: { Type: "docker", Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] },
    Resources: { CPUMillis: 500, MemoryBytes: 64 * MIB },
    Network: "None",
    ExecutionTimeout: 0,
    ...overrides,
  };
}

async function startNode(nodeId = `wn-${randomUUID().slice(0, 8)}`, dataDir = tempDir(`shoal-${nodeId}-`)) {
  if (!nodeIds.includes(nodeId)) nodeIds.push(nodeId);
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
    dataDir,
    executor,
    resourceUpdateMs: 200,
  });
  agents.push(agent);
  await agent.start();
  return { nodeId, dataDir, agent, executor };
}

const containersOf = (nodeId: string) =>
  docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });
const newIds = () => ({ executionId: `e-${randomUUID()}`, jobId: `j-${randomUUID()}` });

beforeAll(async () => {
  image = await dockerTestImage();
  nats = await TestNatsServer.start();
  // The reports go to this test's recording port, not to the orchestrator's execution actors.
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, { "Orchestrator.Auth.Token": TOKEN }),
    silentLogger,
    { takeExecutionReports: false },
  );
  nc = await connect({ servers: nats.url });
  reports = new RecordingExecutionReports();
  handler = new ExecutionReportHandler(nc, reports, { enforcesNodeKeys: false, logger: silentLogger });
  handler.start();
  work = new NodeWorkClient(nc);
}, 60_000);

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

afterAll(async () => {
  await handler?.stop();
  await nc?.close();
  await orchestrator?.stop();
  await nats?.stop();
  for (const nodeId of nodeIds)
    for (const c of await containersOf(nodeId)) await docker.getContainer(c.Id).remove({ force: true });
});

describe("work protocol: running executions on a compute node", () => {
  it("runs an execution and reports its bid, start and completion with exit code and output; its capacity is held meanwhile", async () => {
    const { nodeId, executor } = await startNode();
    const { executionId, jobId } = newIds();
    work.runExecution({ nodeId, executionId, jobId, task: task("echo hello; echo oops >&2; sleep 1") });
    await reports.next(executionId, "ExecutionStarted");
    // The node reports what its executor's ledger leaves free.
    await waitFor(
      () => orchestrator.manager.live(nodeId)?.resources?.AvailableCapacity.CPU === 1.5,
      5000,
      () => "free CPU 1.5 reported",
    );
    expect(orchestrator.manager.live(nodeId)?.resources).toMatchObject({
      AvailableCapacity: { CPU: 1.5, Memory: 960 * MIB },
      RunningExecutions: 1,
    });
    const done = await reports.next(executionId, "ExecutionCompleted");
    expect(reports.types(executionId)).toEqual(["BidAccepted", "ExecutionStarted", "ExecutionCompleted"]);
    expect(done).toMatchObject({
      NodeID: nodeId,
      RunOutput: { ExitCode: 0, STDOUT: "hello\n", STDERR: "oops\n", StdoutTruncated: false, StderrTruncated: false },
    });
    await waitFor(
      () => executor.ledger.running().length === 0,
      5000,
      () => "capacity released",
    );
    await waitFor(
      async () => (await containersOf(nodeId)).length === 0,
      10_000,
      () => "container removed",
    );
  });

  it("reports a failing command as failed with its exit code and output", async () => {
    const { nodeId } = await startNode();
    const { executionId, jobId } = newIds();
    work.runExecution({ nodeId, executionId, jobId, task: task("echo bad >&2; exit 3") });
    const failed = await reports.next(executionId, "ExecutionFailed");
    expect(failed).toMatchObject({
      Cause: "exited",
      Reason: `execution ${executionId}: the command exited with code 3`,
      RunOutput: { ExitCode: 3, STDERR: "bad\n" },
    });
    expect(reports.types(executionId)).toEqual(["BidAccepted", "ExecutionStarted", "ExecutionFailed"]);
  });

  it("refuses a job too large for the node with the reason, running nothing; a bid that fits is accepted and runs nothing", async () => {
    const { nodeId } = await startNode();
    const big = newIds();
    work.runExecution({
      nodeId,
      ...big,
      task: task("true", { Resources: { CPUMillis: 4000, MemoryBytes: 64 * MIB } }),
    });
    const rejected = await reports.next(big.executionId, "BidRejected");
    expect(rejected).toMatchObject({ Code: "BadRequest", Answers: "RunExecution" });
    expect(rejected.Reason).toBe(
      `node ${nodeId} can never fit execution ${big.executionId}: it asks for 4000m CPU and 64MiB memory; the node has 2000m CPU and 1GiB memory in all`,
    );
    const ask = newIds();
    work.askForBid({ nodeId, ...ask, task: task("true", { Resources: { CPUMillis: 3000, MemoryBytes: 64 * MIB } }) });
    expect(await reports.next(ask.executionId, "BidRejected")).toMatchObject({
      Code: "BadRequest",
      Answers: "AskForBid",
    });
    const hostEnv = newIds();
    work.runExecution({ nodeId, ...hostEnv, task: task("true", { Env: { TOKEN: "env:HOME" } }) });
    expect(await reports.next(hostEnv.executionId, "BidRejected")).toMatchObject({
      Code: "BadRequest",
      Reason: `execution ${hostEnv.executionId} asks for TOKEN from the node's environment (env:HOME), which this node does not give out`,
    });
    const fits = newIds();
    work.askForBid({ nodeId, ...fits, task: task("true") });
    await reports.next(fits.executionId, "BidAccepted");
    expect(reports.types(big.executionId)).toEqual(["BidRejected"]);
    expect(await containersOf(nodeId)).toEqual([]);
  });

  it("declines the bid for an image the node does not have and does not pull, naming it, running nothing", async () => {
    const { nodeId } = await startNode();
    const ask = newIds();
    work.askForBid({
      nodeId,
      ...ask,
      task: task("true", { Engine: { Type: "docker", Image: "shoal-test/no-such-image:1" } }),
    });
    expect(await reports.next(ask.executionId, "BidRejected")).toMatchObject({
      Code: "NotFound",
      Answers: "AskForBid",
      Reason: `image shoal-test/no-such-image:1 is not on node ${nodeId}, and this node does not pull images`,
    });
    expect(reports.types(ask.executionId)).toEqual(["BidRejected"]);
    expect(await containersOf(nodeId)).toEqual([]);
  });

  it("cancels a running execution: its container is stopped and removed, and it is reported failed (cancelled)", async () => {
    const { nodeId, executor } = await startNode();
    const { executionId, jobId } = newIds();
    work.runExecution({ nodeId, executionId, jobId, task: task("sleep 60") });
    await reports.next(executionId, "ExecutionStarted");
    expect((await containersOf(nodeId)).map((c) => c.State)).toEqual(["running"]);
    work.cancelExecution(nodeId, executionId, "stopped by alice");
    const failed = await reports.next(executionId, "ExecutionFailed");
    expect(failed).toMatchObject({ Cause: "cancelled" });
    expect(failed.Reason).toContain("stopped by alice");
    expect(await containersOf(nodeId)).toEqual([]);
    expect(executor.ledger.running()).toEqual([]);
    // A cancel for an execution the node does not run is answered too, so the orchestrator can close it.
    const stranger = `e-${randomUUID()}`;
    work.cancelExecution(nodeId, stranger, "cleanup");
    expect(await reports.next(stranger, "ExecutionFailed")).toMatchObject({
      Cause: "cancelled",
      Reason: `execution ${stranger} was cancelled: it does not run on node ${nodeId}`,
    });
  });

  it("refuses work that does not fit now as Unavailable, with what is free, while another execution holds the capacity", async () => {
    const { nodeId } = await startNode();
    const holder = newIds();
    work.runExecution({
      nodeId,
      ...holder,
      task: task("sleep 30", { Resources: { CPUMillis: 1500, MemoryBytes: 64 * MIB } }),
    });
    await reports.next(holder.executionId, "ExecutionStarted");
    const busy = newIds();
    work.runExecution({
      nodeId,
      ...busy,
      task: task("true", { Resources: { CPUMillis: 1000, MemoryBytes: 64 * MIB } }),
    });
    const rejected = await reports.next(busy.executionId, "BidRejected");
    expect(rejected).toMatchObject({ Code: "Unavailable" });
    expect(rejected.Reason).toBe(
      `node ${nodeId} cannot fit execution ${busy.executionId} now: it asks for 1000m CPU and 64MiB memory; free: 500m CPU of 2000m CPU, 960MiB of 1GiB memory (1 running)`,
    );
    work.cancelExecution(nodeId, holder.executionId, "done with it");
    await reports.next(holder.executionId, "ExecutionFailed");
  });

  it("an agent restarted mid-run adopts the container and reports its completion; one whose container vanished reports it lost", async () => {
    const first = await startNode();
    const { nodeId, dataDir } = first;
    const adopted = newIds();
    const lost = newIds();
    work.runExecution({ nodeId, ...adopted, task: task("sleep 3; echo finished") });
    work.runExecution({ nodeId, ...lost, task: task("sleep 60") });
    await reports.next(adopted.executionId, "ExecutionStarted");
    await reports.next(lost.executionId, "ExecutionStarted");
    await first.agent.stop();
    agents.splice(agents.indexOf(first.agent), 1);
    // While the agent is down, one container goes away.
    const gone = (await containersOf(nodeId)).find((c) => c.Labels["shoal.execution"] === lost.executionId)!;
    await docker.getContainer(gone.Id).remove({ force: true });

    const second = await startNode(nodeId, dataDir);
    expect(second.executor.ledger.running()).toEqual([adopted.executionId]);
    const failed = await reports.next(lost.executionId, "ExecutionFailed");
    expect(failed).toMatchObject({
      Cause: "lost",
      Reason: `execution ${lost.executionId} was lost: node ${nodeId} restarted and its container was gone`,
    });
    const done = await reports.next(adopted.executionId, "ExecutionCompleted");
    expect(done.RunOutput).toMatchObject({ ExitCode: 0, STDOUT: "finished\n" });
    expect(reports.types(adopted.executionId)).toEqual(["BidAccepted", "ExecutionStarted", "ExecutionCompleted"]);
    await waitFor(
      async () => (await containersOf(nodeId)).length === 0,
      10_000,
      () => "containers removed",
    );
  });
});

describe("work protocol: repeats and timeouts", () => {
  it("a repeated run neither starts a second container nor runs an ended execution again; a repeat while it runs says where it stands", async () => {
    const { nodeId, dataDir } = await startNode();
    const ids = newIds();
    const run = { nodeId, ...ids, task: task("sleep 1; echo once") };
    work.runExecution(run);
    work.runExecution(run);
    await reports.next(ids.executionId, "ExecutionStarted");
    expect((await containersOf(nodeId)).length).toBe(1);
    work.runExecution(run);
    await waitFor(
      () => reports.types(ids.executionId).filter((t) => t === "ExecutionStarted").length === 2,
      5000,
      () => "start said again",
    );
    await reports.next(ids.executionId, "ExecutionCompleted");
    await waitFor(
      async () => (await containersOf(nodeId)).length === 0,
      10_000,
      () => "container removed",
    );
    // The node has heard its end answered (the answer may trail the report's arrival here).
    await waitFor(
      () => new KnownExecutions(dataDir, nodeId).get(ids.executionId)?.delivered === true,
      5000,
      () => "end delivered",
    );
    const seen = reports.of(ids.executionId).length;
    work.runExecution(run);
    // A later message to the same node is handled after the repeat: by its report, the repeat was taken and ignored.
    const probe = newIds();
    work.askForBid({ nodeId, ...probe, task: task("true") });
    await reports.next(probe.executionId, "BidAccepted");
    expect(reports.of(ids.executionId).length).toBe(seen);
    expect(await containersOf(nodeId)).toEqual([]);
    expect(reports.of(ids.executionId).filter((r) => r.Type === "ExecutionCompleted")).toHaveLength(1);
  });

  it("a repeated AskForBid is answered with where the node stands: a bid again before the run, its bid and start while it runs, nothing once its end was answered", async () => {
    const { nodeId, dataDir } = await startNode();
    const ids = newIds();
    const work1 = { nodeId, ...ids, task: task("sleep 1; echo asked") };
    work.askForBid(work1);
    work.askForBid(work1);
    await waitFor(
      () => reports.types(ids.executionId).length === 2,
      5000,
      () => "both asks answered",
    );
    expect(reports.types(ids.executionId)).toEqual(["BidAccepted", "BidAccepted"]);
    expect(await containersOf(nodeId)).toEqual([]); // asking runs nothing
    work.runExecution(work1);
    await reports.next(ids.executionId, "ExecutionStarted");
    work.askForBid(work1);
    await waitFor(
      () => reports.types(ids.executionId).filter((t) => t === "ExecutionStarted").length === 2,
      5000,
      () => "start said again",
    );
    expect((await containersOf(nodeId)).length).toBe(1);
    await reports.next(ids.executionId, "ExecutionCompleted");
    await waitFor(
      () => new KnownExecutions(dataDir, nodeId).get(ids.executionId)?.delivered === true,
      5000,
      () => "end delivered",
    );
    const seen = reports.of(ids.executionId).length;
    work.askForBid(work1);
    const probe = newIds();
    work.askForBid({ nodeId, ...probe, task: task("true") });
    await reports.next(probe.executionId, "BidAccepted");
    expect(reports.of(ids.executionId).length).toBe(seen);
  });

  it("kills an execution past its ExecutionTimeout and reports it failed (timeout)", async () => {
    const { nodeId } = await startNode();
    const ids = newIds();
    work.runExecution({ nodeId, ...ids, task: task("sleep 30", { ExecutionTimeout: 1 }) });
    const failed = await reports.next(ids.executionId, "ExecutionFailed");
    expect(failed).toMatchObject({
      Cause: "timeout",
      Reason: `execution ${ids.executionId} timed out: it ran past its 1s timeout and was killed`,
    });
    await waitFor(
      async () => (await containersOf(nodeId)).length === 0,
      10_000,
      () => "container removed",
    );
  });
});

describe("work protocol: an orchestrator away", () => {
  it("reports the node could not deliver are delivered, in order, once an orchestrator answers again", async () => {
    const { nodeId } = await startNode();
    await handler.stop();
    const ids = newIds();
    work.runExecution({ nodeId, ...ids, task: task("echo while-away") });
    // It runs and ends while nobody takes its reports.
    await waitFor(
      async () => (await containersOf(nodeId)).length === 0,
      15_000,
      () => "ran and was removed",
    );
    expect(reports.of(ids.executionId)).toEqual([]);
    handler = new ExecutionReportHandler(nc, reports, { enforcesNodeKeys: false, logger: silentLogger });
    handler.start();
    const done = await reports.next(ids.executionId, "ExecutionCompleted", 30_000);
    expect(done.RunOutput.STDOUT).toBe("while-away\n");
    expect(reports.types(ids.executionId)).toEqual(["BidAccepted", "ExecutionStarted", "ExecutionCompleted"]);
  }, 60_000);
});

describe("work protocol: bad messages", () => {
  it("a node refuses work it cannot read: garbage is dropped, an invalid run is rejected with the reason, nothing runs", async () => {
    const { nodeId } = await startNode();
    nc.publish(executionWorkSubject(nodeId), new Uint8Array([0x85, 0xa1]));
    // Cluster-event JSON, as a reader's push consumer could aim there: never a work message.
    const json = newIds();
    nc.publish(
      executionWorkSubject(nodeId),
      Buffer.from(
        JSON.stringify({
          Type: "RunExecution",
          MessageID: "m0",
          NodeID: nodeId,
          ExecutionID: json.executionId,
          JobID: json.jobId,
          Task: task("true"),
        }),
      ),
    );
    const bad = newIds();
    nc.publish(
      executionWorkSubject(nodeId),
      encode({
        Type: "RunExecution",
        MessageID: "m1",
        NodeID: nodeId,
        ExecutionID: bad.executionId,
        JobID: bad.jobId,
        Task: { ...task("true"), Resources: { CPUMillis: 0, MemoryBytes: 1 } },
      }),
    );
    const rejected = await reports.next(bad.executionId, "BidRejected");
    expect(rejected.Code).toBe("BadRequest");
    expect(rejected.Reason).toMatch(/^invalid message: .*CPUMillis/s);
    // Work for another node on this node's subject is not run either.
    const other = newIds();
    nc.publish(
      executionWorkSubject(nodeId),
      encode({
        Type: "RunExecution",
        MessageID: "m2",
        NodeID: "someone-else",
        ExecutionID: other.executionId,
        JobID: other.jobId,
        Task: task("true"),
      }),
    );
    // The orchestrator's own client refuses to send an invalid message at all.
    expect(() =>
      work.runExecution({ nodeId, ...newIds(), task: { ...task("true"), Network: "Bridge" as never } }),
    ).toThrow(ProtocolError);
    const ok = newIds();
    work.runExecution({ nodeId, ...ok, task: task("true") });
    await reports.next(ok.executionId, "ExecutionCompleted");
    expect(reports.of(other.executionId)).toEqual([]);
    expect(reports.of(json.executionId)).toEqual([]);
    expect(reports.types(bad.executionId)).toEqual(["BidRejected"]);
  });

  it("the orchestrator refuses an invalid report, or one whose node is not its subject's, and hands it to nothing", async () => {
    const ask = (subject: string, body: unknown) =>
      nc.request(subject, encode(body), { timeout: 5000 }).then((m) => decode(ProtocolResponse, m.data));
    const before = reports.received.length;
    const executionId = `e-${randomUUID()}`;
    expect(
      await ask(executionReportSubject("node-x"), {
        Type: "ExecutionCompleted",
        MessageID: "m",
        NodeID: "node-x",
        ExecutionID: executionId,
      }),
    ).toMatchObject({
      Accepted: false,
      Code: "BadRequest",
      Reason: expect.stringMatching(/^invalid message: .*RunOutput/s),
    });
    expect(
      await ask(executionReportSubject("node-x"), {
        Type: "Nonsense",
        MessageID: "m",
        NodeID: "node-x",
        ExecutionID: executionId,
      }),
    ).toEqual({
      Accepted: false,
      Code: "BadRequest",
      Reason:
        'invalid message: Type must be one of BidAccepted, BidRejected, ExecutionStarted, ExecutionCompleted, ExecutionFailed (got "Nonsense")',
    });
    expect(
      await ask(executionReportSubject("node-x"), {
        Type: "ExecutionStarted",
        MessageID: "m",
        NodeID: "node-y",
        ExecutionID: executionId,
      }),
    ).toMatchObject({
      Accepted: false,
      Code: "BadRequest",
      Reason: "subject is for node node-x but the message is from node-y",
    });
    const garbage = await nc.request(executionReportSubject("node-x"), new Uint8Array([0x85, 0xa1]), { timeout: 5000 });
    expect(decode(ProtocolResponse, garbage.data)).toMatchObject({
      Accepted: false,
      Code: "BadRequest",
      Reason: expect.stringContaining("not valid MessagePack"),
    });
    expect(reports.received.length).toBe(before);
    // A well-formed one is accepted and handed over.
    expect(
      await ask(executionReportSubject("node-x"), {
        Type: "ExecutionStarted",
        MessageID: "m",
        NodeID: "node-x",
        ExecutionID: executionId,
      }),
    ).toEqual({ Accepted: true });
    expect(reports.types(executionId)).toEqual(["ExecutionStarted"]);
  });
});
