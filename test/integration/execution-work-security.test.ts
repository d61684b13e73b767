import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecutionReportHandler } from "../../src/actors/execution-report-handler.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { decode, encode } from "../../src/transport/codec.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { executionReportSubject, executionWorkSubject } from "../../src/transport/subjects.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { OwnNatsLogins } from "../support/own-nats-logins.ts";
import { RecordingExecutionReports } from "../support/recording-execution-reports.ts";
import { startJoinedAgents } from "../support/test-agent.ts";

/**
 * The work protocol on the orchestrator's own nats-server, as a hostile node meets it: a node may
 * only report for itself, and only for executions placed on it; it can neither read another
 * node's work nor forge work.
 */
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let reports: RecordingExecutionReports;
let handler: ExecutionReportHandler;
const agents: Record<string, { agent: ComputeAgent; dataDir: string }> = {};

const nats = new OwnNatsLogins(() => ({ running: orchestrator, dataDir: config.DataDir }));
const asNode = (id: string) => nats.asNode(id, agents[id]!.dataDir);
const asOrchestrator = () => nats.asOrchestrator();
const started = (nodeId: string, executionId: string) => ({
  Type: "ExecutionStarted",
  MessageID: randomUUID(),
  NodeID: nodeId,
  ExecutionID: executionId,
});
const report = async (nc: NatsConnection, subject: string, body: unknown) =>
  decode(ProtocolResponse, (await nc.request(subject, encode(body), { timeout: 5000 })).data);

beforeAll(async () => {
  config = await ownNatsOrchestratorConfig("shoal-worksec-");
  // The reports go to this test's recording port, not to the orchestrator's execution actors.
  orchestrator = await startOrchestrator(config, silentLogger, { takeExecutionReports: false });
  Object.assign(agents, await startJoinedAgents(orchestrator, ["node-a", "node-b"]));
  reports = new RecordingExecutionReports();
  handler = new ExecutionReportHandler(await asOrchestrator(), reports, {
    enforcesNodeKeys: true,
    logger: silentLogger,
  });
  handler.start();
});

afterAll(async () => {
  await handler?.stop();
  await nats.closeAll();
  for (const { agent } of Object.values(agents)) await agent.stop();
  await orchestrator?.stop();
});

describe("work protocol on the orchestrator's own nats-server", () => {
  it("node A cannot report for node B: NATS refuses B's subject, and B's id on A's subject is refused", async () => {
    const a = await asNode("node-a");
    const executionId = `e-${randomUUID()}`;
    await expect(
      a.request(executionReportSubject("node-b"), encode(started("node-b", executionId)), { timeout: 2000 }),
    ).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    expect(await report(a, executionReportSubject("node-a"), started("node-b", executionId))).toEqual({
      Accepted: false,
      Code: "BadRequest",
      Reason: "subject is for node node-a but the message is from node-b",
    });
    expect(reports.of(executionId)).toEqual([]);
  });

  it("node A cannot report on B's executions as itself: the port refuses an execution placed elsewhere; B's own report is taken", async () => {
    const a = await asNode("node-a");
    const b = await asNode("node-b");
    const executionId = `e-${randomUUID()}`;
    reports.placements.set(executionId, "node-b");
    expect(await report(a, executionReportSubject("node-a"), started("node-a", executionId))).toEqual({
      Accepted: false,
      Code: "Forbidden",
      Reason: `execution ${executionId} is not placed on node node-a`,
    });
    expect(reports.of(executionId)).toEqual([]);
    expect(await report(b, executionReportSubject("node-b"), started("node-b", executionId))).toEqual({
      Accepted: true,
    });
    expect(reports.types(executionId)).toEqual(["ExecutionStarted"]);
  });

  it("a node can neither read another node's work nor send work to any node", async () => {
    const a = await asNode("node-a");
    const sub = a.subscribe(executionWorkSubject("node-b"));
    const outcome = (async () => {
      for await (const _ of sub) return "delivered";
      return "closed";
    })();
    await expect(outcome).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    const forger = await asNode("node-a");
    for (const target of ["node-a", "node-b"]) {
      await expect(
        forger.request(executionWorkSubject(target), encode({ Type: "CancelExecution" }), { timeout: 2000 }),
      ).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
    }
  });
});
