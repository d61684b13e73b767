import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { encode, unpack } from "../../src/transport/codec.ts";
import { logBatchSubject, logReadSubject, type LogBatch, type ReadLogs } from "../../src/transport/log-messages.ts";
import { NodeLogClient } from "../../src/transport/node-log-client.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { OwnNatsLogins } from "../support/own-nats-logins.ts";
import { startJoinedAgents } from "../support/test-agent.ts";

/**
 * The log protocol on the orchestrator's own nats-server, as a hostile node meets it: the
 * subjects are the ones each node's login already had (no permission was added for logs), a node
 * can neither read another node's log requests nor answer them, and the orchestrator takes a batch
 * only from the node it asked.
 */
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
const agents: Record<string, { agent: ComputeAgent; dataDir: string }> = {};
const logs = capturedLogger();

const nats = new OwnNatsLogins(() => ({ running: orchestrator, dataDir: config.DataDir }));
const asNode = (id: string) => nats.asNode(id, agents[id]!.dataDir);
const asOrchestrator = () => nats.asOrchestrator();
const batchFor = (request: ReadLogs, nodeId: string, text: string): LogBatch => ({
  Type: "LogBatch",
  NodeID: nodeId,
  ExecutionID: request.ExecutionID,
  StreamID: request.StreamID,
  Seq: request.Seq,
  Chunks: [{ Stream: "stdout", Data: Buffer.from(text) }],
  End: true,
});

beforeAll(async () => {
  config = await ownNatsOrchestratorConfig("shoal-logsec-");
  orchestrator = await startOrchestrator(config, logs.logger);
  Object.assign(agents, await startJoinedAgents(orchestrator, ["node-a", "node-b"]));
});

afterAll(async () => {
  await nats.closeAll();
  for (const { agent } of Object.values(agents)) await agent.stop();
  await orchestrator?.stop();
});

describe("log protocol on the orchestrator's own nats-server", () => {
  it("a node cannot read another node's log requests", async () => {
    const a = await asNode("node-a");
    const sub = a.subscribe(logReadSubject("node-b"));
    const outcome = (async () => {
      for await (const _ of sub) return "delivered";
      return "closed";
    })();
    await expect(outcome).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
  });

  it("a node can neither send log requests nor publish batches as another node", async () => {
    const a = await asNode("node-a");
    for (const subject of [logReadSubject("node-a"), logReadSubject("node-b"), logBatchSubject("node-b")]) {
      await expect(a.request(subject, encode({ Type: "ReadLogs" }), { timeout: 2000 }), subject).rejects.toMatchObject({
        code: "PERMISSIONS_VIOLATION",
      });
    }
  });

  it("the orchestrator takes a batch only from the node it asked, even with the right StreamID", async () => {
    const orch = await asOrchestrator();
    const client = new NodeLogClient(orch, silentLogger, 3000);
    client.start();
    const a = await asNode("node-a");
    const b = await asNode("node-b");
    // Node B receives the request on its own subject (the test acts as node B's log server).
    const requests = b.subscribe(logReadSubject("node-b"), { max: 1 });
    await b.flush();
    const executionId = `e-${randomUUID()}`;
    const read = (async () => {
      const got: string[] = [];
      for await (const chunk of client.read("node-b", executionId, { follow: false }))
        got.push(Buffer.from(chunk.data).toString());
      return got;
    })();
    let request: ReadLogs | undefined;
    for await (const msg of requests) request = unpack(msg.data) as ReadLogs;
    expect(request).toMatchObject({ Type: "ReadLogs", NodeID: "node-b", ExecutionID: executionId, Seq: 0 });
    // Node A learned the StreamID (it cannot, but say it guessed): its batches, as itself or claiming B, are not taken.
    a.publish(logBatchSubject("node-a"), encode(batchFor(request!, "node-a", "forged as a")));
    a.publish(logBatchSubject("node-a"), encode(batchFor(request!, "node-b", "forged as b")));
    await a.flush();
    await new Promise((r) => setTimeout(r, 200));
    b.publish(logBatchSubject("node-b"), encode(batchFor(request!, "node-b", "real")));
    expect(await read).toEqual(["real"]);
    client.stop();
  });

  it("the orchestrator's node protocol handler leaves log batches alone (nothing refused or warned about)", async () => {
    const a = await asNode("node-a");
    // A batch nobody waits for: the protocol's subscription (shoal.compute.*.*) matches it too.
    a.publish(logBatchSubject("node-a"), encode({ Type: "LogBatch" }));
    await a.request(logBatchSubject("node-a"), encode({ Type: "LogBatch" }), { timeout: 500 }).catch(() => undefined);
    await a.flush();
    await new Promise((r) => setTimeout(r, 300));
    // Before log batches were skipped there, each one was a bad request it would not answer: a warning apiece.
    expect(logs.records.filter((r) => r.level >= 40 && JSON.stringify(r).includes(logBatchSubject("node-a")))).toEqual(
      [],
    );
  });
});
