import { randomUUID } from "node:crypto";
import type { NatsConnection, Subscription } from "nats";
import type { Logger } from "pino";
import { ShoalError, unavailable } from "../errors/shoal-error.ts";
import { RefusalLog } from "../logging/refusal-log.ts";
import { ProtocolError, encode, unpack, validate } from "./codec.ts";
import {
  LOG_BATCH_SUBSCRIPTION,
  LOG_POLL_MS,
  LogBatch,
  logBatchNodeId,
  logReadSubject,
  type ReadLogs,
} from "./log-messages.ts";

export interface LogRead {
  readonly follow: boolean;
  readonly tailLines?: number;
  readonly signal?: AbortSignal;
  /** Read the execution's published result archive instead of its output. */
  readonly result?: boolean;
}

export interface OutputChunk {
  readonly stream: "stdout" | "stderr";
  readonly data: Uint8Array;
}

/** What the API reads logs through (the orchestrator's NodeLogClient). */
export interface NodeLogReader {
  read(nodeId: string, executionId: string, options: LogRead): AsyncIterable<OutputChunk>;
}

interface Waiting {
  readonly nodeId: string;
  readonly seq: number;
  readonly resolve: (batch: LogBatch) => void;
}

/** How long past the node's own poll a batch may take before the request is sent again. */
const ANSWER_MS = 5_000;
/** Requests sent for one Seq before the node counts as not answering. */
const ATTEMPTS = 3;
const NO_ANSWER = Symbol("no answer");

/**
 * The orchestrator's side of the log protocol (src/transport/log-messages.ts): it asks a node for
 * one batch at a time, on the node's own subject, and asks for the next only once the reader has
 * taken the last, so a slow reader slows the node's reads rather than filling a buffer. Batches
 * arrive on one subscription, `shoal.compute.*.logs` (not a queue group: every orchestrator hears
 * every batch and keeps those of the streams it opened); a batch counts only when its subject's
 * node — which NATS permissions tie to the sender — is the node asked, and its StreamID and Seq are
 * the ones awaited.
 */
export class NodeLogClient implements NodeLogReader {
  private subscription: Subscription | undefined;
  private readonly waiting = new Map<string, Waiting>();
  private readonly refusalLog: RefusalLog;

  constructor(
    private readonly nc: NatsConnection,
    private readonly logger: Logger,
    private readonly answerMs = LOG_POLL_MS + ANSWER_MS,
  ) {
    this.refusalLog = new RefusalLog(logger);
  }

  start(): void {
    this.subscription = this.nc.subscribe(LOG_BATCH_SUBSCRIPTION, {
      callback: (err, msg) => {
        if (err) {
          this.logger.error({ err }, "log batch subscription error");
          return;
        }
        this.receive(msg.subject, msg.data);
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private receive(subject: string, data: Uint8Array): void {
    const nodeId = logBatchNodeId(subject);
    if (nodeId === undefined) return;
    let batch: LogBatch;
    try {
      batch = validate(LogBatch, unpack(data));
    } catch (e) {
      this.refusalLog.warn("log batch dropped: not a valid LogBatch", "BadRequest", () => ({
        nodeId,
        err: e instanceof ProtocolError ? e.message : e,
      }));
      return;
    }
    const waiting = this.waiting.get(batch.StreamID);
    if (waiting === undefined) return; // another orchestrator's stream, or an answer that came too late
    if (waiting.nodeId !== nodeId || batch.NodeID !== nodeId) {
      const streamId = batch.StreamID;
      this.refusalLog.warn("log batch dropped: sent by a node that was not asked", "Forbidden", () => ({
        nodeId,
        streamId,
      }));
      return;
    }
    if (batch.Seq !== waiting.seq) return;
    this.waiting.delete(batch.StreamID);
    waiting.resolve(batch);
  }

  private ask(request: ReadLogs, signal: AbortSignal | undefined): Promise<LogBatch | typeof NO_ANSWER> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(NO_ANSWER), this.answerMs);
      const onAbort = () => done(NO_ANSWER);
      const done = (value: LogBatch | typeof NO_ANSWER) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (this.waiting.get(request.StreamID)?.resolve === settle) this.waiting.delete(request.StreamID);
        resolve(value);
      };
      const settle = (batch: LogBatch) => done(batch);
      this.waiting.set(request.StreamID, { nodeId: request.NodeID, seq: request.Seq, resolve: settle });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.nc.publish(logReadSubject(request.NodeID), encode(request));
    });
  }

  /**
   * The execution's output from its node, batch by batch. Throws the node's error (NotFound: it no longer runs there)
   * or Unavailable (no answer).
   */
  async *read(nodeId: string, executionId: string, options: LogRead): AsyncGenerator<OutputChunk> {
    const base = {
      Type: "ReadLogs" as const,
      NodeID: nodeId,
      ExecutionID: executionId,
      StreamID: randomUUID().replaceAll("-", ""),
      Follow: options.follow,
      ...(options.tailLines === undefined ? {} : { TailLines: options.tailLines }),
      ...(options.result ? { Result: true } : {}),
    };
    let ended = false;
    try {
      for (let seq = 0; ; seq++) {
        let batch: LogBatch | typeof NO_ANSWER = NO_ANSWER;
        for (let attempt = 0; attempt < ATTEMPTS && batch === NO_ANSWER; attempt++) {
          if (options.signal?.aborted) return;
          batch = await this.ask({ ...base, Seq: seq }, options.signal);
        }
        if (options.signal?.aborted) return;
        if (batch === NO_ANSWER) {
          ended = true; // the node would not hear a close either
          throw unavailable(
            `node ${nodeId} did not answer a read of the ${options.result ? "result" : "logs"} of execution ` +
              `${executionId} (${ATTEMPTS} tries)`,
            5,
          );
        }
        for (const chunk of batch.Chunks) yield { stream: chunk.Stream, data: chunk.Data };
        if (batch.End) {
          ended = true;
          if (batch.Error) throw new ShoalError({ kind: batch.Error.Kind, message: batch.Error.Message });
          return;
        }
      }
    } finally {
      // The reader stopped early: the node frees the stream now rather than after its idle time.
      if (!ended && !this.nc.isClosed())
        this.nc.publish(logReadSubject(nodeId), encode({ ...base, Seq: 0, Close: true } satisfies ReadLogs));
    }
  }
}
