import type { Logger } from "pino";
import { createReadStream, existsSync } from "node:fs";
import { asShoalError, notFound, unavailable, type ShoalError } from "../errors/shoal-error.ts";
import { ProtocolError, unpack, validate } from "../transport/codec.ts";
import {
  LOG_POLL_MS,
  LOG_STREAM_IDLE_MS,
  MAX_LOG_BATCH_BYTES,
  MAX_LOG_BATCH_CHUNKS,
  MAX_LOG_STREAMS,
  ReadLogs,
  type LogBatch,
} from "../transport/log-messages.ts";
import { executionLog } from "./execution-log.ts";
import type { Executor, LogChunk } from "./executor/executor.ts";

export interface ExecutionLogServerOptions {
  readonly nodeId: string;
  readonly executor: Executor;
  /** Publishes one batch on the node's own log subject; throws when NATS cannot take it. */
  readonly send: (batch: LogBatch) => void;
  readonly logger: Logger;
  readonly pollMs?: number;
  readonly idleMs?: number;
  readonly maxStreams?: number;
  readonly maxBatchBytes?: number;
  /** Where an execution's published result archive is on this node (ReadLogs with Result); absent: it has none. */
  readonly resultArchive?: (executionId: string) => string;
  /** Why an execution's result is no longer on this node, when its retention rule removed it. */
  readonly resultRemoved?: (executionId: string) => string | undefined;
}

/** The archive's bytes in chunks; NotFound, saying when and why if it was removed, when this node holds none. */
async function* archiveChunks(
  options: Pick<ExecutionLogServerOptions, "resultArchive" | "resultRemoved">,
  executionId: string,
  size: number,
): AsyncGenerator<LogChunk> {
  const path = options.resultArchive?.(executionId);
  if (path === undefined || !existsSync(path))
    throw notFound(
      options.resultRemoved?.(executionId) ?? `execution ${executionId} has no published result on this node`,
    );
  for await (const data of createReadStream(path, { highWaterMark: size }))
    yield { stream: "stdout", data: data as Buffer };
}

interface Stream {
  readonly id: string;
  readonly executionId: string;
  readonly chunks: AsyncIterator<LogChunk>;
  readonly abort: AbortController;
  /** A read of the executor that a batch stopped waiting for: the next batch starts with it. */
  pending: Promise<IteratorResult<LogChunk>> | undefined;
  /** What did not fit in the last batch. */
  carry: LogChunk | undefined;
  /** The Seq the next request must have. */
  next: number;
  last: LogBatch | undefined;
  busy: boolean;
  idle: NodeJS.Timeout;
}

const LINGER_MS = 20;
/** With msgpack's few bytes per chunk, a batch of MAX_LOG_BATCH_CHUNKS stays under the message limit. */
const MAX_CHUNKS = MAX_LOG_BATCH_CHUNKS;
const TIMED_OUT = Symbol("timed out");

function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The compute node's side of the log protocol (src/transport/log-messages.ts): each `ReadLogs`
 * is answered with one batch of at most maxBatchBytes, read from the executor only then. The
 * executor's logs are pulled (an async iterator over the engine's HTTP stream), so output the
 * reader has not asked for stays in the engine's log, not in this process: what a stream holds
 * here is one batch and one chunk read ahead. A follow's request waits up to pollMs for output
 * (the orchestrator asks again on an empty batch) and the batch says End once the execution has
 * ended. Streams nobody asked on for idleMs are closed, and at most maxStreams are open at once.
 */
export class ExecutionLogServer {
  private readonly streams = new Map<string, Stream>();
  private readonly pollMs: number;
  private readonly idleMs: number;
  private readonly maxStreams: number;
  private readonly maxBatchBytes: number;

  constructor(private readonly options: ExecutionLogServerOptions) {
    this.pollMs = options.pollMs ?? LOG_POLL_MS;
    this.idleMs = options.idleMs ?? LOG_STREAM_IDLE_MS;
    this.maxStreams = options.maxStreams ?? MAX_LOG_STREAMS;
    this.maxBatchBytes = options.maxBatchBytes ?? MAX_LOG_BATCH_BYTES;
  }

  /** Streams open now (for tests and the node's own logs). */
  get openStreams(): number {
    return this.streams.size;
  }

  /** One ReadLogs as NATS delivered it. A message that is not one is logged and dropped: there is nobody to answer. */
  handle(data: Uint8Array): void {
    let request: ReadLogs;
    try {
      request = validate(ReadLogs, unpack(data));
    } catch (e) {
      this.options.logger.warn(
        { err: e instanceof ProtocolError ? e.message : e },
        "log request refused: not a valid ReadLogs",
      );
      return;
    }
    if (request.NodeID !== this.options.nodeId) {
      this.options.logger.warn({ nodeId: request.NodeID }, "log request for another node dropped");
      return;
    }
    void this.answer(request).catch((e: unknown) =>
      this.options.logger.error({ err: e, executionId: request.ExecutionID }, "log batch could not be sent"),
    );
  }

  private async answer(request: ReadLogs): Promise<void> {
    let stream = this.streams.get(request.StreamID);
    if (request.Close === true) {
      if (stream) this.close(stream);
      return;
    }
    if (stream === undefined) {
      if (request.Seq !== 0)
        return this.refuse(
          request,
          unavailable(
            `log stream ${request.StreamID} is not open on node ${this.options.nodeId} (closed after ${this.idleMs} ms without a read?)`,
            1,
          ),
        );
      if (this.streams.size >= this.maxStreams)
        return this.refuse(
          request,
          unavailable(`node ${this.options.nodeId} has ${this.maxStreams} log streams open; try again later`, 5),
        );
      stream = this.open(request);
    }
    if (stream.executionId !== request.ExecutionID) return; // another execution's stream id: not an answer we give
    this.touch(stream);
    if (request.Seq === stream.next - 1 && stream.last) {
      this.options.send(stream.last); // the last answer was lost: the same batch again
      return;
    }
    // a repeat of a request being answered, or out of order: dropped
    if (request.Seq !== stream.next || stream.busy) return;
    stream.busy = true;
    let batch: LogBatch;
    try {
      batch = await this.collect(stream, request);
    } finally {
      stream.busy = false;
    }
    stream.last = batch;
    stream.next = request.Seq + 1;
    if (batch.End) this.close(stream);
    this.options.send(batch);
  }

  private open(request: ReadLogs): Stream {
    const abort = new AbortController();
    const chunks = request.Result
      ? archiveChunks(this.options, request.ExecutionID, this.maxBatchBytes)
      : executionLog(this.options.executor, request.ExecutionID, {
          follow: request.Follow,
          ...(request.TailLines === undefined ? {} : { tailLines: request.TailLines }),
          signal: abort.signal,
        });
    const stream: Stream = {
      id: request.StreamID,
      executionId: request.ExecutionID,
      chunks,
      abort,
      pending: undefined,
      carry: undefined,
      next: 0,
      last: undefined,
      busy: false,
      idle: setTimeout(() => {}, 0),
    };
    this.streams.set(stream.id, stream);
    return stream;
  }

  private touch(stream: Stream): void {
    clearTimeout(stream.idle);
    stream.idle = setTimeout(() => {
      this.options.logger.info(
        { executionId: stream.executionId, streamId: stream.id },
        "log stream closed: its reader stopped asking",
      );
      this.close(stream);
    }, this.idleMs);
    stream.idle.unref();
  }

  private close(stream: Stream): void {
    clearTimeout(stream.idle);
    if (this.streams.get(stream.id) !== stream) return;
    this.streams.delete(stream.id);
    stream.abort.abort();
    // A read still waiting ends with the abort; return() then runs the executor's cleanup.
    void Promise.resolve(stream.pending)
      .catch(() => undefined)
      .then(() => stream.chunks.return?.(undefined))
      .catch(() => undefined);
  }

  /** Up to maxBatchBytes: the first chunk waited for (up to pollMs), the rest only while more comes at once. */
  private async collect(stream: Stream, request: ReadLogs): Promise<LogBatch> {
    const chunks: { Stream: LogChunk["stream"]; Data: Uint8Array }[] = [];
    let bytes = 0;
    let end = false;
    let error: ShoalError | undefined;
    const take = (chunk: LogChunk) => {
      const room = this.maxBatchBytes - bytes;
      const data = chunk.data.length > room ? chunk.data.subarray(0, room) : chunk.data;
      if (chunk.data.length > room) stream.carry = { stream: chunk.stream, data: chunk.data.subarray(room) };
      chunks.push({ Stream: chunk.stream, Data: data });
      bytes += data.length;
    };
    while (bytes < this.maxBatchBytes && chunks.length < MAX_CHUNKS) {
      if (stream.carry) {
        const carried = stream.carry;
        stream.carry = undefined;
        take(carried);
        continue;
      }
      stream.pending ??= stream.chunks.next();
      let result: IteratorResult<LogChunk> | typeof TIMED_OUT;
      try {
        result = await within(stream.pending, chunks.length === 0 ? this.pollMs : LINGER_MS);
      } catch (e) {
        stream.pending = undefined;
        error = asShoalError(e);
        end = true;
        break;
      }
      if (result === TIMED_OUT) break;
      stream.pending = undefined;
      if (result.done) {
        end = true;
        break;
      }
      take(result.value);
    }
    return {
      Type: "LogBatch",
      NodeID: this.options.nodeId,
      ExecutionID: request.ExecutionID,
      StreamID: request.StreamID,
      Seq: request.Seq,
      Chunks: chunks,
      End: end,
      ...(error ? { Error: { Kind: error.kind, Message: error.message.slice(0, 1024) } } : {}),
    };
  }

  private refuse(request: ReadLogs, error: ShoalError): void {
    this.options.send({
      Type: "LogBatch",
      NodeID: this.options.nodeId,
      ExecutionID: request.ExecutionID,
      StreamID: request.StreamID,
      Seq: request.Seq,
      Chunks: [],
      End: true,
      Error: { Kind: error.kind, Message: error.message.slice(0, 1024) },
    });
  }

  /** Closes every stream (the node is stopping). */
  stop(): void {
    for (const stream of [...this.streams.values()]) this.close(stream);
  }
}
