import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ExecutionLogServer, type ExecutionLogServerOptions } from "../../src/compute/execution-log-server.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { ExecutionSpec } from "../../src/compute/executor/executor.ts";
import { encode } from "../../src/transport/codec.ts";
import type { LogBatch, ReadLogs } from "../../src/transport/log-messages.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger } from "../support/fixtures.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * The node's side of the log protocol against a real Docker engine: batches as asked for, a follow
 * that ends with the execution, a tail, and what a reader that stops asking leaves behind (nothing).
 */
const docker = new Docker();
const MIB = 1024 * 1024;
const nodeId = `logsrv-${randomUUID().slice(0, 8)}`;
let image = "";
let executor: DockerExecutor;
const servers: ExecutionLogServer[] = [];

beforeAll(async () => {
  image = await dockerTestImage();
  executor = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 4000, memoryBytes: 1024 * MIB },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
  });
}, 60_000);

afterEach(() => {
  for (const s of servers.splice(0)) s.stop();
});

afterAll(async () => {
  await executor?.close();
  for (const c of await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } }))
    await docker.getContainer(c.Id).remove({ force: true });
});

const spec = (command: string): ExecutionSpec => ({
  executionId: `e-${randomUUID()}`,
  image,
  entrypoint: ["sh", "-c"],
  parameters: [command],
  resources: { cpuMillis: 250, memoryBytes: 32 * MIB },
});

/** A server whose batches land in `batches`, in the order sent, each with the time it was sent. */
function server(overrides: Partial<ExecutionLogServerOptions> = {}) {
  const batches: (LogBatch & { at: number })[] = [];
  const s = new ExecutionLogServer({
    nodeId,
    executor,
    send: (b) => batches.push({ ...b, at: Date.now() }),
    logger: silentLogger,
    pollMs: 500,
    ...overrides,
  });
  servers.push(s);
  return { s, batches };
}

const request = (executionId: string, streamId: string, seq: number, extra: Partial<ReadLogs> = {}): Uint8Array =>
  encode({
    Type: "ReadLogs",
    NodeID: nodeId,
    ExecutionID: executionId,
    StreamID: streamId,
    Seq: seq,
    Follow: false,
    ...extra,
  });

/** Reads a stream to its end the way the orchestrator does: one request per batch. */
async function readAll(
  s: ExecutionLogServer,
  batches: (LogBatch & { at: number })[],
  executionId: string,
  extra: Partial<ReadLogs> = {},
) {
  const streamId = randomUUID().replaceAll("-", "");
  const mine = () => batches.filter((b) => b.StreamID === streamId);
  for (let seq = 0; ; seq++) {
    s.handle(request(executionId, streamId, seq, extra));
    await waitFor(
      () => mine().length > seq,
      20_000,
      () => `batch ${seq} of ${streamId}`,
    );
    const batch = mine()[seq]!;
    if (batch.End) return mine();
  }
}
const text = (batches: readonly LogBatch[], stream?: "stdout" | "stderr") =>
  Buffer.concat(
    batches.flatMap((b) =>
      b.Chunks.filter((c) => stream === undefined || c.Stream === stream).map((c) => Buffer.from(c.Data)),
    ),
  ).toString();

describe("ExecutionLogServer on a Docker executor", () => {
  it("follow: batches come as the container writes, and the last says End once it has ended", async () => {
    const running = await executor.run(spec("for i in 1 2 3; do echo $i; sleep 1; done"));
    expect(await running.started).toBe(true);
    const { s, batches } = server();
    const got = await readAll(s, batches, running.executionId, { Follow: true });
    expect(text(got)).toBe("1\n2\n3\n");
    const at = (line: string) => got.find((b) => text([b]).includes(line))!.at;
    // Given as written, a second apart, not all at the end.
    expect(at("3") - at("1")).toBeGreaterThanOrEqual(1500);
    expect(got.at(-1)!.End).toBe(true);
    expect(got.at(-1)!.Error).toBeUndefined();
    expect(s.openStreams).toBe(0);
    expect((await running.done).state).toBe("Completed");
  }, 30_000);

  it("stdout and stderr come tagged; a tail gives only the last lines, then what follows", async () => {
    const running = await executor.run(spec("echo a; echo b >&2; sleep 1; echo c; echo d; sleep 2; echo e"));
    expect(await running.started).toBe(true);
    const { s, batches } = server();
    // Wait until the first four lines are written.
    await waitFor(
      async () => (text(await readAll(s, batches, running.executionId)).match(/\n/g) ?? []).length >= 4,
      10_000,
      () => "four lines written",
    );
    const all = await readAll(s, batches, running.executionId);
    expect(text(all, "stdout")).toBe("a\nc\nd\n");
    expect(text(all, "stderr")).toBe("b\n");
    // Docker orders the two streams as its log received them: b, a second before c, is before it.
    const tailed = await readAll(s, batches, running.executionId, { TailLines: 2, Follow: true });
    expect(text(tailed)).toBe("c\nd\ne\n");
    expect((await running.done).state).toBe("Completed");
  }, 30_000);

  it("an execution that does not run here: the first batch ends the stream with NotFound", async () => {
    const { s, batches } = server();
    const got = await readAll(s, batches, `e-${randomUUID()}`);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ End: true, Chunks: [], Error: { Kind: "NotFound" } });
  });

  it("a reader that stops asking: each batch is bounded, nothing is read ahead, and the stream is closed after the idle time", async () => {
    // Writes without end: only what is asked for may leave the engine's log.
    const running = await executor.run(spec("while true; do echo 0123456789abcdefghijklmnopqrstuvwxyz; done"));
    expect(await running.started).toBe(true);
    const { s, batches } = server({ maxBatchBytes: 1000, idleMs: 300 });
    const streamId = randomUUID().replaceAll("-", "");
    s.handle(request(running.executionId, streamId, 0, { Follow: true }));
    await waitFor(
      () => batches.length === 1,
      10_000,
      () => "first batch",
    );
    s.handle(request(running.executionId, streamId, 1, { Follow: true }));
    await waitFor(
      () => batches.length === 2,
      10_000,
      () => "second batch",
    );
    for (const b of batches) expect(text([b]).length).toBeLessThanOrEqual(1000);
    expect(batches.every((b) => !b.End)).toBe(true);
    expect(s.openStreams).toBe(1);
    await waitFor(
      () => s.openStreams === 0,
      5_000,
      () => "idle stream closed",
    );
    // Nothing was sent that was not asked for.
    expect(batches).toHaveLength(2);
    // Asking on after the close: refused, not resumed.
    s.handle(request(running.executionId, streamId, 2, { Follow: true }));
    await waitFor(
      () => batches.length === 3,
      5_000,
      () => "refusal",
    );
    expect(batches[2]).toMatchObject({ End: true, Error: { Kind: "Unavailable" } });
    await executor.cancel(running.executionId, "test over");
  }, 30_000);

  it("a lost answer is sent again for the same Seq; a Close frees the stream at once; more than maxStreams are refused", async () => {
    const running = await executor.run(spec("echo one; sleep 30"));
    expect(await running.started).toBe(true);
    const { s, batches } = server({ maxStreams: 1 });
    const first = randomUUID().replaceAll("-", "");
    s.handle(request(running.executionId, first, 0, { Follow: true }));
    await waitFor(
      () => batches.length === 1,
      10_000,
      () => "first batch",
    );
    s.handle(request(running.executionId, first, 0, { Follow: true }));
    await waitFor(
      () => batches.length === 2,
      10_000,
      () => "the same batch again",
    );
    expect(batches[1]).toEqual({ ...batches[0], at: batches[1]!.at });
    const second = randomUUID().replaceAll("-", "");
    s.handle(request(running.executionId, second, 0, { Follow: true }));
    await waitFor(
      () => batches.length === 3,
      10_000,
      () => "refusal",
    );
    expect(batches[2]).toMatchObject({ StreamID: second, End: true, Error: { Kind: "Unavailable" } });
    s.handle(request(running.executionId, first, 0, { Close: true }));
    expect(s.openStreams).toBe(0);
    await executor.cancel(running.executionId, "test over");
  }, 30_000);

  it("ignores what is not a ReadLogs for this node", async () => {
    const { s, batches } = server();
    s.handle(encode({ Type: "ReadLogs", NodeID: nodeId }));
    s.handle(new Uint8Array([0xc1]));
    s.handle(
      encode({
        Type: "ReadLogs",
        NodeID: "other-node",
        ExecutionID: `e-${randomUUID()}`,
        StreamID: "abcdefgh12",
        Seq: 0,
        Follow: false,
      }),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(batches).toEqual([]);
    expect(s.openStreams).toBe(0);
  });
});
