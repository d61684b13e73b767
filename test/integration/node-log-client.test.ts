import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShoalError } from "../../src/errors/shoal-error.ts";
import { encode, unpack } from "../../src/transport/codec.ts";
import { logBatchSubject, logReadSubject, type LogBatch, type ReadLogs } from "../../src/transport/log-messages.ts";
import { NodeLogClient } from "../../src/transport/node-log-client.ts";
import { silentLogger } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * The orchestrator's side of the log protocol on a real nats-server, against a node played by the
 * test: one request per batch and the next only once the last was taken, a lost answer asked for
 * again, a node that never answers, and a reader that stops early.
 */
let nats: TestNatsServer;
let orch: NatsConnection;
let node: NatsConnection;
const NODE = "node-x";

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orch = await connect({ servers: nats.url });
  node = await connect({ servers: nats.url });
});

afterAll(async () => {
  await orch?.close();
  await node?.close();
  await nats?.stop();
});

/** The node's side: every request it gets, and a way to answer one. */
function playNode() {
  const requests: ReadLogs[] = [];
  const sub = node.subscribe(logReadSubject(NODE), {
    callback: (_err, msg) => requests.push(unpack(msg.data) as ReadLogs),
  });
  const answer = (request: ReadLogs, text: string, end: boolean, error?: LogBatch["Error"]) =>
    node.publish(
      logBatchSubject(NODE),
      encode({
        Type: "LogBatch",
        NodeID: NODE,
        ExecutionID: request.ExecutionID,
        StreamID: request.StreamID,
        Seq: request.Seq,
        Chunks: text === "" ? [] : [{ Stream: "stdout", Data: Buffer.from(text) }],
        End: end,
        ...(error ? { Error: error } : {}),
      } satisfies LogBatch),
    );
  return { requests, answer, stop: () => sub.unsubscribe() };
}

describe("NodeLogClient", () => {
  it("asks for one batch at a time, the next only once the reader took the last; a lost answer is asked for again", async () => {
    const played = playNode();
    await node.flush();
    const client = new NodeLogClient(orch, silentLogger, 400);
    client.start();
    const chunks = client.read(NODE, "e-1", { follow: true, tailLines: 5 })[Symbol.asyncIterator]();
    const first = chunks.next();
    await waitFor(
      () => played.requests.length === 1,
      5000,
      () => "first request",
    );
    expect(played.requests[0]).toMatchObject({
      Type: "ReadLogs",
      NodeID: NODE,
      ExecutionID: "e-1",
      Seq: 0,
      Follow: true,
      TailLines: 5,
    });
    played.answer(played.requests[0]!, "one\n", false);
    expect(Buffer.from((await first).value!.data).toString()).toBe("one\n");
    // Nothing more is asked for until the reader asks.
    await new Promise((r) => setTimeout(r, 200));
    expect(played.requests).toHaveLength(1);
    const second = chunks.next();
    await waitFor(
      () => played.requests.length === 2,
      5000,
      () => "second request",
    );
    // This answer is "lost": the same Seq is asked for again, and that answer is taken.
    await waitFor(
      () => played.requests.length === 3,
      5000,
      () => "the same request again",
    );
    expect(played.requests[2]).toMatchObject({ Seq: 1, StreamID: played.requests[0]!.StreamID });
    played.answer(played.requests[2]!, "two\n", true);
    expect(Buffer.from((await second).value!.data).toString()).toBe("two\n");
    expect((await chunks.next()).done).toBe(true);
    client.stop();
    played.stop();
  });

  it("a node that never answers: Unavailable after three tries; a node's error ends the read with it", async () => {
    const played = playNode();
    await node.flush();
    const client = new NodeLogClient(orch, silentLogger, 200);
    client.start();
    const silentRead = async (executionId: string, result: boolean) => {
      for await (const _ of client.read(NODE, executionId, { follow: false, result })) return "got output";
      return "ended";
    };
    const silent = silentRead("e-2", false);
    // A result's download is worded as one, not as a log read.
    const silentResult = silentRead("e-4", true);
    await expect(silent).rejects.toMatchObject({
      kind: "Unavailable",
      message: `node ${NODE} did not answer a read of the logs of execution e-2 (3 tries)`,
    });
    await expect(silentResult).rejects.toMatchObject({
      kind: "Unavailable",
      message: `node ${NODE} did not answer a read of the result of execution e-4 (3 tries)`,
    });
    expect(played.requests.filter((r) => r.ExecutionID === "e-2").map((r) => r.Seq)).toEqual([0, 0, 0]);

    const failing = (async () => {
      for await (const _ of client.read(NODE, "e-3", { follow: false })) return "got output";
      return "ended";
    })();
    await waitFor(
      () => played.requests.some((r) => r.ExecutionID === "e-3"),
      5000,
      () => "request",
    );
    played.answer(
      played.requests.find((r) => r.ExecutionID === "e-3")!,
      "",
      true,
      { Kind: "NotFound", Message: "execution e-3 does not run on node node-x" },
    );
    const error = (await failing.catch((e: unknown) => e)) as ShoalError;
    expect(error).toMatchObject({ kind: "NotFound", message: "execution e-3 does not run on node node-x" });
    client.stop();
    played.stop();
  });

  it("a reader that stops early tells the node to close the stream", async () => {
    const played = playNode();
    await node.flush();
    const client = new NodeLogClient(orch, silentLogger, 2000);
    client.start();
    const reading = (async () => {
      for await (const chunk of client.read(NODE, "e-4", { follow: true })) return Buffer.from(chunk.data).toString();
      return "ended";
    })();
    await waitFor(
      () => played.requests.some((r) => r.ExecutionID === "e-4"),
      5000,
      () => "request",
    );
    played.answer(
      played.requests.find((r) => r.ExecutionID === "e-4")!,
      "first\n",
      false,
    );
    expect(await reading).toBe("first\n");
    await waitFor(
      () => played.requests.some((r) => r.ExecutionID === "e-4" && r.Close === true),
      5000,
      () => "Close",
    );
    client.stop();
    played.stop();
  });
});
