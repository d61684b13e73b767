import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type ConnectionOptions, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { encode, unpack } from "../../src/transport/codec.ts";
import { logBatchSubject, logReadSubject, type LogBatch, type ReadLogs } from "../../src/transport/log-messages.ts";
import { ORCHESTRATOR_PERMISSIONS, ORCHESTRATOR_USER } from "../../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys } from "../../src/transport/nats-jwt/nats-operator.ts";
import { NodeLogClient } from "../../src/transport/node-log-client.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * The log protocol on the orchestrator's own nats-server, as a hostile node meets it: the
 * subjects are the ones each node's login already had (no permission was added for logs), a node
 * can neither read another node's log requests nor answer them, and the orchestrator takes a batch
 * only from the node it asked.
 */
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
const agents: Record<string, { agent: ComputeAgent; dataDir: string }> = {};
const open: NatsConnection[] = [];
const logs = capturedLogger();

const login = async (options: Partial<ConnectionOptions>): Promise<NatsConnection> => {
  const nc = await connect({ servers: orchestrator.natsUrl, reconnect: false, ...options });
  open.push(nc);
  return nc;
};
const asNode = (id: string) => {
  const { dataDir } = agents[id]!;
  const jwt = readFileSync(join(dataDir, "credentials", `${id}.jwt`), "utf8").trim();
  return login({ authenticator: jwtLogin(jwt, loadOrCreateNodeKey(dataDir, id)), inboxPrefix: `_INBOX_NODE.${id}` });
};
const asOrchestrator = () => {
  const operator = new NatsOperator(loadOrCreateOperatorKeys(join(config.DataDir, "credentials")), { joinToken: orchestrator.joinToken.token, jetStreamDiskBytes: 1 });
  const key = newNkey("user");
  return login({ authenticator: jwtLogin(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key) });
};
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
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-logsec-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
  };
  orchestrator = await startOrchestrator(config, logs.logger);
  for (const id of ["node-a", "node-b"]) {
    const dataDir = tempDir(`shoal-${id}-`);
    const agent = testAgent({ nodeId: id, orchestrators: [orchestrator.natsUrl], token: orchestrator.joinToken.token, dataDir, infoUpdateMs: 5000, resourceUpdateMs: 5000 });
    agents[id] = { agent, dataDir };
    await agent.start();
  }
});

afterAll(async () => {
  await Promise.allSettled(open.map((nc) => nc.close()));
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
      await expect(a.request(subject, encode({ Type: "ReadLogs" }), { timeout: 2000 }), subject).rejects.toMatchObject({ code: "PERMISSIONS_VIOLATION" });
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
      for await (const chunk of client.read("node-b", executionId, { follow: false })) got.push(Buffer.from(chunk.data).toString());
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
    expect(logs.records.filter((r) => r.level >= 40 && JSON.stringify(r).includes(logBatchSubject("node-a")))).toEqual([]);
  });
});
