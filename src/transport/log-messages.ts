import { Schema } from "effect";
import { NodeId } from "../events/catalog/node-info.ts";
import { ERROR_KINDS } from "../errors/shoal-error.ts";
import { ExecutionID } from "./work-messages.ts";

/**
 * The log protocol (docs/jobs.md, Logs): how the orchestrator reads an execution's output from
 * the node that runs it. A pull cursor, not a push stream: the orchestrator publishes `ReadLogs`
 * with the next sequence number on the node's own `shoal.work.<id>.logs` (which only that node may
 * read), and the node publishes one `LogBatch` for it on its own `shoal.compute.<id>.logs` (which
 * only that node may publish to). The node never sends a batch nobody asked for, so a slow or
 * vanished reader costs it one batch per stream at most; a stream nobody asks on for
 * LOG_STREAM_IDLE_MS is closed.
 */
export const logReadSubject = (nodeId: string): string => `shoal.work.${nodeId}.logs`;
export const LOG_BATCH_METHOD = "logs";
export const logBatchSubject = (nodeId: string): string => `shoal.compute.${nodeId}.${LOG_BATCH_METHOD}`;
export const LOG_BATCH_SUBSCRIPTION = `shoal.compute.*.${LOG_BATCH_METHOD}`;
const COMPUTE_PREFIX = "shoal.compute.";
const LOG_BATCH_SUFFIX = `.${LOG_BATCH_METHOD}`;

/** The node id of a log batch's subject, or undefined for any other subject. */
export function logBatchNodeId(subject: string): string | undefined {
  if (!subject.endsWith(LOG_BATCH_SUFFIX) || !subject.startsWith(COMPUTE_PREFIX)) return undefined;
  const nodeId = subject.slice(COMPUTE_PREFIX.length, subject.length - LOG_BATCH_SUFFIX.length);
  return nodeId.length > 0 && !nodeId.includes(".") ? nodeId : undefined;
}

/** The most output bytes one batch carries: with its framing it stays under the 64 KiB message limit. */
export const MAX_LOG_BATCH_BYTES = 32 * 1024;
export const MAX_LOG_BATCH_CHUNKS = 1024;
/** How long a follow's read waits for output before answering an empty batch (the reader then asks again). */
export const LOG_POLL_MS = 5_000;
/** A stream nobody asked on for this long is closed on the node (its reader went away). */
export const LOG_STREAM_IDLE_MS = 30_000;
/** At most this many streams open on one node at once; more are refused Unavailable. */
export const MAX_LOG_STREAMS = 64;
/** The most lines `TailLines` may ask for (what the node holds while it finds the last ones). */
export const MAX_TAIL_LINES = 10_000;

const StreamID = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{8,64}$/));
const Seq = Schema.Number.pipe(Schema.int(), Schema.nonNegative());

/**
 * Read the next batch of a stream. Seq 0 opens it (Follow and TailLines are read then); each
 * later Seq is the previous one + 1; asking the last Seq again gets the same batch again (a lost
 * answer). Close ends the stream at once.
 */
export const ReadLogs = Schema.Struct({
  Type: Schema.Literal("ReadLogs"),
  NodeID: NodeId,
  ExecutionID,
  StreamID,
  Seq,
  /** Keep reading until the execution ends (else: what it wrote so far). */
  Follow: Schema.Boolean,
  /** Only the last N lines of what it wrote so far (then, with Follow, what comes); absent: from its start. */
  TailLines: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(0, MAX_TAIL_LINES))),
  Close: Schema.optional(Schema.Boolean),
  /**
   * Read the execution's published result (the local publisher's `<executionId>.tar.gz`) instead
   * of its output: its bytes as `stdout` chunks, Follow and TailLines ignored. Nodes before results
   * answer with the output; the orchestrator asks only nodes whose execution reported a result.
   */
  Result: Schema.optional(Schema.Boolean),
});
export type ReadLogs = typeof ReadLogs.Type;

export const LogChunkMessage = Schema.Struct({
  Stream: Schema.Literal("stdout", "stderr"),
  Data: Schema.Uint8ArrayFromSelf,
});

/** One answer: the output since the last batch; End once there is no more (the execution ended, or no Follow). */
export const LogBatch = Schema.Struct({
  Type: Schema.Literal("LogBatch"),
  NodeID: NodeId,
  ExecutionID,
  StreamID,
  Seq,
  Chunks: Schema.Array(LogChunkMessage).pipe(Schema.maxItems(MAX_LOG_BATCH_CHUNKS)),
  End: Schema.Boolean,
  /** Why the stream ended early (then End is true): one of Shoal's error kinds and its message. */
  Error: Schema.optional(
    Schema.Struct({ Kind: Schema.Literal(...ERROR_KINDS), Message: Schema.String.pipe(Schema.maxLength(1024)) }),
  ),
});
export type LogBatch = typeof LogBatch.Type;
