import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/actors/clock.ts";
import { ExecutionReportHandler } from "../../src/actors/execution-report-handler.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { NodeProtocolHandler } from "../../src/actors/node-protocol-handler.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { encode } from "../../src/transport/codec.ts";
import { NodeLogClient } from "../../src/transport/node-log-client.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { RecordingExecutionReports } from "../support/recording-execution-reports.ts";

/**
 * Junk on every subject a node may publish, from made-up node ids (an open NATS: no per-node keys
 * to stop that): each message is refused, and what the refusals leave behind stays bounded —
 * the heartbeat-refusal limiter's nodes, the kinds of refusal the log remembers, and the log
 * itself (a line per kind of refusal per interval, not per message).
 */
const JUNK = 20_000;
let nats: TestNatsServer;
let orch: NatsConnection;
let node: NatsConnection;
let store: SqliteEventStore;
let manager: NodeManager;
let protocol: NodeProtocolHandler;
let reportsHandler: ExecutionReportHandler;
let logs: NodeLogClient;
const log = capturedLogger();

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orch = await connect({ servers: nats.url });
  node = await connect({ servers: nats.url });
  store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  const thresholds = new HealthThresholds({ disconnectMs: 60_000, unknownMs: 300_000 });
  manager = new NodeManager({ store, clock: systemClock, logger: log.logger, manualApproval: false, thresholds });
  protocol = new NodeProtocolHandler(orch, manager, { joinToken: "t", enforcesNodeKeys: false, logger: log.logger });
  protocol.start();
  reportsHandler = new ExecutionReportHandler(orch, new RecordingExecutionReports(), {
    enforcesNodeKeys: false,
    logger: log.logger,
  });
  reportsHandler.start();
  logs = new NodeLogClient(orch, log.logger);
  logs.start();
  await orch.flush();
}, 30_000);

afterAll(async () => {
  logs?.stop();
  await reportsHandler?.stop();
  await protocol?.stop();
  manager?.stop();
  await node?.close();
  await orch?.close();
  await store?.close();
  await nats?.stop();
});

describe("junk messages", () => {
  it("are all refused, and leave bounded state and a bounded log behind", async () => {
    const garbage = [
      new Uint8Array([0xc1]),
      encode({ NodeID: 7 }),
      encode({ Junk: "x".repeat(100) }),
      new Uint8Array([0xdf, 0xff, 0xff, 0xff]),
    ];
    const methods = ["heartbeat", "info", "resources", "execution", "logs"];
    const answered: Promise<unknown>[] = [];
    for (let i = 0; i < JUNK; i++) {
      const id = `junk-${i}`;
      const data = garbage[i % garbage.length] as Uint8Array;
      const subject =
        i % 11 === 0 ? `shoal.join.${id}` : `shoal.compute.${id}.${methods[i % methods.length] as string}`;
      // Published, asked with a reply, and asked with a reply outside the sender's inbox.
      if (i % 3 === 0) node.publish(subject, data);
      else if (i % 3 === 1) node.publish(subject, data, { reply: `_INBOX.junk.${i}` });
      else node.publish(subject, data, { reply: `shoal.events.node.${id}.Forged` });
      if (i % 1000 === 0) await node.flush();
    }
    // The orchestrator reads its messages in order: once this is answered, every message before it was handled.
    answered.push(node.request("shoal.compute.last.info", garbage[0] as Uint8Array, { timeout: 10_000 }));
    await Promise.all(answered);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const refusals = log.records.filter((r) => r.level === 40);
    // A line per kind of refusal (the message and the error kind) of each handler, not per message.
    expect(refusals.length).toBeLessThan(20);
    expect(refusals.map((r) => r.msg)).toEqual(
      expect.arrayContaining([
        "compute request refused",
        "execution report refused",
        "log batch dropped: not a valid LogBatch",
      ]),
    );
    expect(protocol.refusalState.loggedKinds).toBeLessThan(10);
    expect(protocol.refusalState.limitedNodes).toBeLessThanOrEqual(10_000);
    expect(log.records.filter((r) => r.level >= 50)).toEqual([]);
    expect(manager.nodeCount).toBe(0);
  });
});
