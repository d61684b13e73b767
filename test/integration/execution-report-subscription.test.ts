import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/actors/clock.ts";
import { ExecutionReportHandler } from "../../src/actors/execution-report-handler.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { NodeProtocolHandler } from "../../src/actors/node-protocol-handler.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { decode, encode } from "../../src/transport/codec.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { computeSubject, executionReportSubject } from "../../src/transport/subjects.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { RecordingExecutionReports } from "../support/recording-execution-reports.ts";

/**
 * A node's execution reports reach the orchestrator once: only the execution report handler's
 * subscription matches them, not the node-protocol handler's (which once took `shoal.compute.*.*`
 * and skipped them). Counted where NATS delivers: the orchestrator connection's incoming messages.
 */
let nats: TestNatsServer;
let orch: NatsConnection;
let node: NatsConnection;
let store: SqliteEventStore;
let manager: NodeManager;
let protocol: NodeProtocolHandler;
let reportsHandler: ExecutionReportHandler;
const reports = new RecordingExecutionReports();

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orch = await connect({ servers: nats.url });
  node = await connect({ servers: nats.url });
  store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  manager = new NodeManager({
    store,
    clock: systemClock,
    logger: silentLogger,
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 60_000, unknownMs: 300_000 }),
  });
  protocol = new NodeProtocolHandler(orch, manager, { joinToken: "t", enforcesNodeKeys: false, logger: silentLogger });
  protocol.start();
  reportsHandler = new ExecutionReportHandler(orch, reports, { enforcesNodeKeys: false, logger: silentLogger });
  reportsHandler.start();
  await orch.flush();
}, 30_000);

afterAll(async () => {
  await reportsHandler?.stop();
  await protocol?.stop();
  manager?.stop();
  await node?.close();
  await orch?.close();
  await store?.close();
  await nats?.stop();
});

const ask = async (subject: string, body: unknown) =>
  decode(ProtocolResponse, (await node.request(subject, encode(body), { timeout: 5000 })).data);

describe("execution reports: one subscription", () => {
  it("delivers each report to the orchestrator once, and the node protocol's own messages once", async () => {
    await orch.flush();
    const before = orch.stats().inMsgs;
    const ids = Array.from({ length: 5 }, () => `e-${randomUUID()}`);
    for (const id of ids) {
      expect(
        await ask(executionReportSubject("n1"), {
          Type: "BidAccepted",
          MessageID: randomUUID(),
          NodeID: "n1",
          ExecutionID: id,
        }),
      ).toEqual({ Accepted: true });
    }
    // A node-protocol call still reaches its handler (refused: n1 never joined), once.
    const info = await ask(computeSubject("n1", "resources"), { MessageID: randomUUID(), NodeID: "n1", Resources: {} });
    expect(info.Accepted).toBe(false);
    await orch.flush();
    expect(orch.stats().inMsgs - before).toBe(ids.length + 1);
    expect(reports.received.map((r) => r.ExecutionID)).toEqual(ids);
  });
});
