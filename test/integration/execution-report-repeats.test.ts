import { randomUUID } from "node:crypto";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecutionReportHandler } from "../../src/actors/execution-report-handler.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { SimExecutor } from "../../src/sim/sim-executor.ts";
import { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import type { WorkTask } from "../../src/transport/work-messages.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { RecordingExecutionReports } from "../support/recording-execution-reports.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * An orchestrator slow to answer a node's reports repeats its work meanwhile (every 2 s): on real
 * components (nats-server, the report handler, a compute agent with a sim node's executor), the
 * node sends a repeated report once more at most, not once per repeat, so that its chain of
 * reports cannot outgrow what the orchestrator answers and an execution's end never waits behind
 * a pile of copies of its bid.
 */
const TOKEN = "repeats-token";
const MIB = 1024 * 1024;
const REPEATS = 8;
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let handler: ExecutionReportHandler;
let work: NodeWorkClient;
let agent: ComputeAgent;
const nodeId = `rr-${randomUUID().slice(0, 8)}`;

/** The recording port, answering bids only once its gate opens: an orchestrator too busy to answer for a while. */
class SlowReports extends RecordingExecutionReports {
  private open: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  release(): void {
    this.open();
  }
  slowBids(): void {
    const record = this.bidAccepted;
    this.bidAccepted = (r) => this.gate.then(() => record(r));
  }
}
let reports: SlowReports;

const task: WorkTask = {
  Engine: { Type: "docker", Image: "busybox", Entrypoint: ["sh", "-c"], Parameters: ["true"] },
  Resources: { CPUMillis: 100, MemoryBytes: 16 * MIB },
  Network: "None",
  ExecutionTimeout: 0,
};

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, { "Orchestrator.Auth.Token": TOKEN }),
    silentLogger,
    { takeExecutionReports: false },
  );
  nc = await connect({ servers: nats.url });
  reports = new SlowReports();
  reports.slowBids();
  handler = new ExecutionReportHandler(nc, reports, { enforcesNodeKeys: false, logger: silentLogger });
  handler.start();
  work = new NodeWorkClient(nc);
  agent = testAgent({
    nodeId,
    orchestrators: [nats.url],
    token: TOKEN,
    executor: new SimExecutor(nodeId, { cpuMillis: 1000, memoryBytes: 1024 * MIB }, 100),
    executionsInMemory: true,
  });
  await agent.start();
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await handler?.stop();
  await nc?.close();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("a node's reports while the orchestrator is slow to answer them", () => {
  it("sends a bid repeated many times while unanswered once more at most, and then the execution's end", async () => {
    const executionId = `e-${randomUUID()}`;
    const jobId = `j-${randomUUID()}`;
    work.askForBid({ nodeId, executionId, jobId, task });
    // The first answer is on its way (held by the orchestrator); the repeats come in meanwhile.
    await new Promise((r) => setTimeout(r, 300));
    expect(reports.received).toEqual([]);
    for (let i = 0; i < REPEATS; i++) {
      work.askForBid({ nodeId, executionId, jobId, task });
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    reports.release();
    work.runExecution({ nodeId, executionId, jobId, task });
    await reports.next(executionId, "ExecutionCompleted", 10_000);
    const bids = reports.types(executionId).filter((t) => t === "BidAccepted");
    expect(bids.length, reports.types(executionId).join(", ")).toBeLessThanOrEqual(2);
    expect(bids.length).toBeGreaterThanOrEqual(1);
  });
});
