import { DiscardPolicy, headers, type JetStreamClient, type JetStreamManager, type JetStreamPublishOptions, type NatsConnection, type StreamConfig } from "nats";
import type { Logger } from "pino";
import type { CheckpointStore, RecordedEvent } from "../events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../events/streams.ts";
import { EVENTS_STREAM, EVENTS_SUBJECTS, eventSubject } from "../transport/subjects.ts";
import { toClusterEvent } from "./cluster-event.ts";
import type { EventEnvelope } from "./event-envelope.ts";
import type { Processor } from "./processor.ts";

const CHECKPOINT = "nats-event-publisher";
const STREAM_NOT_FOUND = 10059;
const INSUFFICIENT_RESOURCES = 10047;
/** JetStream's own error code of a failed API call (undefined for a transport failure). */
const jsErrorCode = (err: unknown): number | undefined => (err as { api_error?: { err_code?: number } }).api_error?.err_code;
const isStreamNotFound = (err: unknown) => jsErrorCode(err) === STREAM_NOT_FOUND;
const PUBLISHED_CATEGORIES = new Set(["node", "job", "execution"]);
// JetStream drops a re-published event id within this window: resends after a crash are not seen twice.
const DUPLICATE_WINDOW_NS = 60 * 60 * 1_000_000_000;

const RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 10_000;
/** JetStream publishes in flight at once, at most. */
export const DEFAULT_PUBLISH_WINDOW = 256;

/** An accepted event until JetStream acknowledged it (or it is not published at all). */
interface Entry {
  readonly event: RecordedEvent;
  /** Undefined for an event of a category that is not published. */
  readonly category: string | undefined;
  state: "waiting" | "sent" | "acked" | "failed";
  error?: unknown;
}

/**
 * Publishes every stored event, in store order, to JetStream stream SHOAL_EVENTS as JSON on
 * shoal.events.<category>.<id>.<Type>, with Nats-Msg-Id = event id. A processor that tracks
 * its own completion: its host moves the persisted checkpoint only past a contiguous prefix of
 * events that JetStream acknowledged.
 *
 * Pipelined: handle() only queues a batch; up to `window` publishes are in flight, across
 * batches, their acks taken in order. Order is kept even when one is lost while later ones
 * are in flight (a reconnect can lose one and not the next): each publish expects the previous
 * event's id to be the stream's last, so JetStream refuses everything after a lost one. On a
 * failure publishing stops, waits (doubling pauses), and resumes with the first unacknowledged
 * event, sent without an expectation (it may be a re-send, which the duplicate window drops)
 * and followed by the rest of the window chained to it. A stream that is gone (503 without a JetStream error) is
 * recreated and publishing resumes at once.
 */
export class NatsEventPublisher implements Processor {
  readonly name = CHECKPOINT;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly encoder = new TextEncoder();
  private queue: Entry[] = [];
  /** queue[head] is the oldest unacknowledged entry. */
  private head = 0;
  private inFlight = 0;
  /** queue[sendIndex] is the next entry to consider sending. */
  private sendIndex = 0;
  /** The id of the last event JetStream stored from us while the chain is unbroken. */
  private lastId: string | undefined;
  /** Publishing is suspended after a failure until this resolves. */
  private paused: Promise<void> | undefined;
  private retryDelayMs = RETRY_DELAY_MS;
  /** Bumped on every failure: acks of publishes sent before it are ignored. */
  private generation = 0;
  private stopping = false;
  private report: (position: number) => void = () => undefined;
  private roomWaiters: (() => void)[] = [];

  constructor(
    private readonly nc: NatsConnection,
    readonly checkpoints: CheckpointStore,
    private readonly logger: Logger,
    /** JetStream keeps the newest events within this many bytes; the event store keeps them all. */
    private readonly maxBytes: number,
    private readonly window = DEFAULT_PUBLISH_WINDOW,
  ) {}

  /** Checks JetStream and the stream; a processor host delivers events after this. */
  async start(): Promise<void> {
    this.jsm = await this.nc.jetstreamManager().catch((err: unknown) => {
      throw new Error(`NATS at ${this.nc.getServer()} has no JetStream, which cluster events need (start nats-server with -js): ${String(err)}`);
    });
    try {
      await this.ensureStream();
    } catch (err) {
      if (jsErrorCode(err) !== INSUFFICIENT_RESOURCES) throw err;
      throw new Error(
        `NATS at ${this.nc.getServer()} cannot give ${EVENTS_STREAM} ${this.maxBytes} bytes (90% of Orchestrator.NATS.JetStreamMaxStore): ` +
          "set Orchestrator.NATS.JetStreamMaxStore to what its JetStream can hold",
      );
    }
    this.js = this.nc.jetstream();
  }

  private streamConfig(): Partial<StreamConfig> & { name: string } {
    return {
      name: EVENTS_STREAM,
      subjects: [EVENTS_SUBJECTS],
      duplicate_window: DUPLICATE_WINDOW_NS,
      max_bytes: this.maxBytes,
      discard: DiscardPolicy.Old,
      // Downstream systems rely on the stream: nobody may purge it or delete events from it.
      deny_purge: true,
      deny_delete: true,
    };
  }

  private async ensureStream(): Promise<"created" | "updated"> {
    const jsm = this.jsm as JetStreamManager;
    const config = this.streamConfig();
    try {
      await jsm.streams.info(EVENTS_STREAM);
    } catch (err) {
      // Only a stream JetStream says is gone is created; any other failure (JetStream busy or
      // down) is left to the retry, so a hiccup never replaces a live stream.
      if (!isStreamNotFound(err)) throw err;
      await jsm.streams.add(config);
      return "created";
    }
    try {
      await jsm.streams.update(EVENTS_STREAM, config);
    } catch (err) {
      // A stream made before purge was denied may refuse to change that on some servers.
      const { deny_purge: _p, deny_delete: _d, ...limits } = config;
      await jsm.streams.update(EVENTS_STREAM, limits);
      this.logger.warn({ err, stream: EVENTS_STREAM }, "could not deny purge/delete on the existing event stream; recreate it to get that protection");
    }
    return "updated";
  }

  trackCompletion(report: (position: number) => void): void {
    this.report = report;
  }

  /** Queues the batch; resolves once fewer than `window` events wait for their acks. */
  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    for (const { recorded: e } of batch) {
      const category = categoryOf(e.stream);
      const published = PUBLISHED_CATEGORIES.has(category);
      this.queue.push({ event: e, category: published ? category : undefined, state: published ? "waiting" : "acked" });
    }
    this.advance();
    this.pump();
    while (this.queue.length - this.head >= this.window && !this.stopping) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every queued event is acknowledged, or at the first failure once stopping. */
  async flush(): Promise<void> {
    this.stopping = true;
    this.notify();
    while (this.head < this.queue.length && this.paused === undefined) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  private notify(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }

  /** Sends what the window allows, in order. */
  private pump(): void {
    if (this.paused) return;
    for (; this.sendIndex < this.queue.length && this.inFlight < this.window; this.sendIndex++) {
      const entry = this.queue[this.sendIndex] as Entry;
      if (entry.state !== "waiting") continue;
      const previous = this.previousId(this.sendIndex);
      // The first unacknowledged event after a (re)start or a failure goes without an
      // expectation (it may be a re-send); nothing else goes before we know its predecessor.
      if (previous === undefined && this.inFlight > 0) return;
      this.send(entry, previous);
    }
  }

  /** The id JetStream must hold last when queue[i] arrives; undefined: unknown (start, failure). */
  private previousId(i: number): string | undefined {
    for (let j = i - 1; j >= this.head; j--) {
      const e = this.queue[j] as Entry;
      if (e.category !== undefined) return e.event.id;
    }
    return this.lastId;
  }

  private send(entry: Entry, previousId: string | undefined): void {
    const e = entry.event;
    const h = headers();
    h.set("Shoal-Event-Type", e.type);
    h.set("Shoal-Position", String(e.position));
    const options: Partial<JetStreamPublishOptions> = { msgID: e.id, headers: h };
    if (previousId !== undefined) options.expect = { lastMsgID: previousId };
    if (this.logger.isLevelEnabled("debug")) this.logger.debug({ id: e.id, type: e.type, position: e.position }, "publishing cluster event");
    entry.state = "sent";
    this.inFlight++;
    const generation = this.generation;
    const subject = eventSubject(entry.category as string, entityIdOf(e.stream), e.type);
    (this.js as JetStreamClient).publish(subject, this.encoder.encode(JSON.stringify(toClusterEvent(e))), options).then(
      () => this.settle(entry, generation, undefined),
      (err: unknown) => this.settle(entry, generation, err ?? new Error("publish failed")),
    );
  }

  private settle(entry: Entry, generation: number, error: unknown): void {
    if (generation !== this.generation) return; // sent before a failure; it is sent again
    this.inFlight--;
    entry.state = error === undefined ? "acked" : "failed";
    if (error !== undefined) entry.error = error;
    this.advance();
    this.pump();
  }

  /** Moves past the acknowledged prefix, reports it, and handles a failure at its front. */
  private advance(): void {
    const start = this.head;
    while (this.head < this.queue.length) {
      const entry = this.queue[this.head] as Entry;
      if (entry.state === "failed") {
        this.fail(entry);
        break;
      }
      if (entry.state !== "acked") break;
      if (entry.category !== undefined) this.lastId = entry.event.id;
      this.head++;
    }
    if (this.head === start) return;
    this.retryDelayMs = RETRY_DELAY_MS;
    this.report((this.queue[this.head - 1] as Entry).event.position);
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.sendIndex -= this.head;
      this.head = 0;
    }
    this.notify();
  }

  private fail(entry: Entry): void {
    const err = entry.error;
    this.generation++;
    this.inFlight = 0;
    this.lastId = undefined; // what follows was refused or may be out of order: re-send from here
    this.sendIndex = this.head;
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i] as Entry;
      if (e.category !== undefined) {
        e.state = "waiting";
        delete e.error;
      }
    }
    const position = entry.event.position;
    const streamGone = (err as { code?: string }).code === "503" && jsErrorCode(err) === undefined;
    if (this.stopping) {
      this.paused = Promise.resolve();
      this.notify();
      return;
    }
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(delay * 2, MAX_RETRY_DELAY_MS);
    const resume = async () => {
      if (streamGone) {
        // No stream takes the subject any more: put it back and carry on from the last ack.
        const how = await this.ensureStream();
        this.logger.warn({ stream: EVENTS_STREAM, how, position }, "the cluster-event stream was missing; recreated it and resumed from the checkpoint");
      } else {
        this.logger.error({ err, position, retryInMs: delay }, "could not publish a cluster event; resuming after a pause from the last acknowledged one");
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    };
    this.paused = resume().then(
      () => undefined,
      async (e: unknown) => {
        this.logger.error({ err: e, stream: EVENTS_STREAM }, "could not recreate the cluster-event stream; retrying after a pause");
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      },
    );
    void this.paused.then(() => {
      this.paused = undefined;
      this.pump();
    });
  }
}
