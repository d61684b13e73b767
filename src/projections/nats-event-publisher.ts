import {
  DiscardPolicy,
  createInbox,
  headers,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
  type StreamConfig,
  StorageType,
  type Subscription,
} from "nats";
import type { Logger } from "pino";
import { type Clock, systemClock } from "../actors/clock.ts";
import { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import { StartupError } from "../errors/startup-error.ts";
import { entityEventsOf } from "../events/catalog/entity-events.ts";
import type { CheckpointStore, RecordedEvent } from "../events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../events/streams.ts";
import { EVENTS_STREAM, EVENTS_SUBJECTS, eventSubject } from "../transport/subjects.ts";
import { jetStreamBusy, untilJetStreamAnswers } from "../transport/until-jetstream-answers.ts";
import { EncodedEvents } from "./encoded-events.ts";
import type { EventEnvelope } from "./event-envelope.ts";
import type { Processor } from "./processor.ts";
import { JS_CODES, jetStreamApiError, jsErrorCode } from "../transport/jetstream-api-error.ts";

const CHECKPOINT = "nats-event-publisher";
const { STREAM_NOT_FOUND, INSUFFICIENT_RESOURCES, NO_PEERS, STREAM_NAME_IN_USE } = JS_CODES;
const isStreamNotFound = (err: unknown) => jsErrorCode(err) === STREAM_NOT_FOUND;
/**
 * The stream's max_bytes does not fit: a single server says so with its own code, a cluster as a placement that
 * found no server with that much storage free (each replica's server reserves all of max_bytes).
 */
const isTooLarge = (err: unknown) =>
  jsErrorCode(err) === INSUFFICIENT_RESOURCES ||
  (jsErrorCode(err) === NO_PEERS && /insufficient storage/i.test(jetStreamApiError(err)?.description ?? ""));
/** JetStream's "stream name already in use": another orchestrator created it between our look and our add. */
/**
 * JetStream API calls wait this long: creating or changing a replicated stream needs its servers to agree, which on a
 * busy cluster takes longer than nats.js's 5 s default.
 */
const JETSTREAM_API_TIMEOUT_MS = 20_000;
// JetStream drops a re-published event id within this window: resends after a crash are not seen twice.
const DUPLICATE_WINDOW_NS = 60 * 60 * 1_000_000_000;

const RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 10_000;
/** How long publishing may fail (a leader election, a server restart) before it is logged as an error. */
const ESCALATE_AFTER_MS = 10_000;
/** JetStream publishes in flight at once, at most. */
export const DEFAULT_PUBLISH_WINDOW = 1024;

/** A JetStream publish that got no reply within this long is lost (as nats.js's own publish timeout). */
export const DEFAULT_ACK_TIMEOUT_MS = 5_000;
/** The deadline that watches the oldest unanswered publish, and the pause after a failure. */
const ACK_TIMEOUT = "nats-event-publisher/ack-timeout";
const RESUME = "nats-event-publisher/resume";

export interface NatsEventPublisherOptions {
  /** JetStream publishes in flight at once, at most. */
  readonly window?: number;
  readonly ackTimeoutMs?: number;
  /** Times the ack timeout (tests fake it). */
  readonly clock?: Clock;
  /** The one deadline heap, on the same clock; without one the publisher keeps its own, stopped by flush(). */
  readonly deadlines?: DeadlineScheduler;
  /** Each event's JSON, shared with the event stream; without it the publisher encodes each event itself. */
  readonly encoded?: EncodedEvents;
  /** Copies of SHOAL_EVENTS a new stream gets (1 on one server; Orchestrator.Cluster.Replicas on a cluster). */
  readonly replicas?: number;
}

/** An accepted event until JetStream acknowledged it (or it is not published at all). */
interface Entry {
  readonly event: RecordedEvent;
  /** Undefined for an event of a category that is not published. */
  readonly category: string | undefined;
  state: "waiting" | "sent" | "acked" | "failed";
  /** When it was last sent (the clock's time), for the ack timeout. */
  sentAt: number;
  /** The JSON, encoded once and kept until acknowledged: a re-send does not encode again. */
  payload?: Uint8Array;
  error?: unknown;
}

/** A JetStream publish that failed, shaped as nats.js reports it (code, and api_error for JetStream's own refusals). */
class PublishError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly api_error?: { code: number; err_code?: number; description?: string },
  ) {
    super(message);
  }
}

const decoder = new TextDecoder();

/**
 * Publishes every stored event, in store order, to JetStream stream SHOAL_EVENTS as JSON on
 * shoal.events.<category>.<id>.<Type>, with Nats-Msg-Id = event id. A processor that tracks
 * its own completion: its host moves the persisted checkpoint only past a contiguous prefix of
 * events that JetStream acknowledged.
 *
 * Pipelined: handle() only queues a batch; up to `window` publishes are in flight, across
 * batches. Each is a plain NATS publish with a reply subject of its own under ONE wildcard inbox
 * subscription (no request object, subscription match or timer per event): JetStream answers
 * there with a PubAck (`duplicate: true` for a re-sent id it already holds), a JetStream API
 * error, or a 503 without payload when no stream takes the subject. The replies of one socket
 * read are settled together; one timer watches the oldest unanswered publish (`ackTimeoutMs`).
 *
 * Order is kept even when one publish is lost while later ones are in flight (a reconnect can
 * lose one and not the next): each publish expects the previous event's id to be the stream's
 * last, so JetStream refuses everything after a lost one. On a failure publishing stops, waits
 * (doubling pauses), and resumes with the first unacknowledged event, sent without an
 * expectation (it may be a re-send, which the duplicate window drops) and followed by the rest
 * of the window chained to it. A stream that is gone (503 without a JetStream error) is
 * recreated and publishing resumes at once.
 */
export class NatsEventPublisher implements Processor {
  readonly name = CHECKPOINT;
  private jsm: JetStreamManager | undefined;
  private readonly encoded: EncodedEvents;
  private queue: Entry[] = [];
  /** queue[head] is the oldest unacknowledged entry. */
  private head = 0;
  private inFlight = 0;
  /** queue[sendIndex] is the next entry to consider sending. */
  private sendIndex = 0;
  /** The id of the last event JetStream stored from us while the chain is unbroken. */
  private lastId: string | undefined;
  /** The id the next publish expects JetStream to hold last; undefined: unknown (start, failure). */
  private chainId: string | undefined;
  /** Publishing is suspended after a failure until this resolves. */
  private paused: Promise<void> | undefined;
  private retryDelayMs = RETRY_DELAY_MS;
  /** When publishing last started failing (the clock's time), or undefined while it goes well. */
  private failingSince: number | undefined;
  /** The position of the newest event queued. */
  private queuedUpTo = -1;
  private stopping = false;
  private report: (position: number) => void = () => undefined;
  private roomWaiters: (() => void)[] = [];
  /** `<inbox>.<token>` is each publish's reply subject; tokens are never reused. */
  private inbox = "";
  private nextToken = 0;
  /** Publishes awaiting their reply, by token; cleared on a failure, so late replies are ignored. */
  private readonly awaiting = new Map<number, Entry>();
  private ackSubscription: Subscription | undefined;
  /** Whether the ack timeout's deadline is armed. */
  private ackArmed = false;
  private settleScheduled = false;
  private readonly window: number;
  private readonly ackTimeoutMs: number;
  private readonly clock: Clock;
  private readonly deadlines: DeadlineScheduler;
  private readonly ownsDeadlines: boolean;
  /** Aborted by flush(): the pause after a failure ends, and publishing does not resume. */
  private readonly stopped = new AbortController();
  private readonly replicas: number;

  constructor(
    private readonly nc: NatsConnection,
    readonly checkpoints: CheckpointStore,
    private readonly logger: Logger,
    /** JetStream keeps the newest events within this many bytes; the event store keeps them all. */
    private readonly maxBytes: number,
    options: NatsEventPublisherOptions = {},
  ) {
    this.window = options.window ?? DEFAULT_PUBLISH_WINDOW;
    this.ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    this.clock = options.clock ?? systemClock;
    this.ownsDeadlines = options.deadlines === undefined;
    this.deadlines = options.deadlines ?? new DeadlineScheduler(this.clock);
    this.encoded = options.encoded ?? new EncodedEvents(0);
    this.replicas = options.replicas ?? 1;
  }

  /**
   * Checks JetStream and the stream; a processor host delivers events after this. A stream that cannot be made or
   * checked yet (a cluster electing leaders, a server down) does not hold start-up: it is logged, and publishing
   * makes it once JetStream can.
   */
  async start(): Promise<void> {
    // A NATS cluster electing leaders (a server lost or back) answers late or not at all for a while: tried again.
    const answered = { clock: this.clock, deadlines: this.deadlines, logger: this.logger };
    this.jsm = await untilJetStreamAnswers(
      "the JetStream API",
      () => this.nc.jetstreamManager({ timeout: JETSTREAM_API_TIMEOUT_MS }),
      answered,
    ).catch((err: unknown) => {
      throw new Error(
        `NATS at ${this.nc.getServer()} has no JetStream, which cluster events need (start nats-server with -js): ` +
          String(err),
      );
    });
    try {
      await untilJetStreamAnswers(`setting up the stream ${EVENTS_STREAM}`, () => this.ensureStream(), answered);
    } catch (err) {
      if (isTooLarge(err)) throw new StartupError(await this.tooLarge());
      // Only JetStream not answering yet, or a cluster short of servers for the replicas, is waited out; a refusal
      // (a stream of the operator's taking these subjects, a permission denied) is a configuration to fix.
      if (!jetStreamBusy(err) && jsErrorCode(err) !== NO_PEERS)
        throw new Error(
          `NATS at ${this.nc.getServer()} refused to set up the cluster-event stream ${EVENTS_STREAM}: ` +
            String((err as Error).message ?? err),
        );
      this.logger.warn(
        { err, stream: EVENTS_STREAM, replicas: this.replicas },
        "could not check or create the cluster-event stream yet; publishing waits and retries it",
      );
      // Nothing is sent before the stream is there with its limits (an operator may make it meanwhile).
      this.resumeAfter(
        this.deadlines.sleep(RESUME, RETRY_DELAY_MS, this.stopped.signal).then(() => this.streamMade(RETRY_DELAY_MS)),
      );
    }
    // Under the connection's own inbox prefix: its permissions allow it, and readers of `_INBOX.>` never see the acks.
    this.inbox = createInbox((this.nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
    this.ackSubscription = this.nc.subscribe(`${this.inbox}.*`, { callback: (_err, msg) => this.receiveReply(msg) });
  }

  /**
   * Whose limit the stream's size hit. JetStream refuses an account's limit and (on one server) the server's storage
   * with the same code, so the account's limit is read and set against what the stream needs with every copy.
   */
  private async tooLarge(): Promise<string> {
    const jsm = this.jsm as JetStreamManager;
    const need = this.maxBytes * this.replicas;
    const sizes =
      `${EVENTS_STREAM} reserves ${this.maxBytes} bytes (90% of Orchestrator.NATS.JetStreamMaxStore) ` +
      `on each of its ${this.replicas} copies`;
    try {
      const limit = (await jsm.getAccountInfo()).limits.max_storage;
      const others = (await jsm.streams.list().next())
        .filter((s) => s.config.name !== EVENTS_STREAM && s.config.storage === StorageType.File)
        .reduce((sum, s) => sum + Math.max(s.config.max_bytes, 0) * Math.max(s.config.num_replicas, 1), 0);
      if (limit >= 0 && need + others > limit)
        return (
          `NATS at ${this.nc.getServer()} refused ${EVENTS_STREAM}: the account's JetStream disk limit is ${limit} ` +
          `bytes, and ${sizes} (${need} bytes), besides ${others} bytes its other streams reserve. ` +
          "With Shoal as the NATS operator each orchestrator sets that limit at start to " +
          "Orchestrator.NATS.JetStreamMaxStore times Orchestrator.Cluster.Replicas: raise JetStreamMaxStore " +
          "(if the servers can hold it) or remove the other streams; otherwise raise the account's JetStream disk limit"
        );
    } catch (e) {
      this.logger.warn({ err: e }, "could not read the account's JetStream limits to say which limit was hit");
    }
    return (
      `NATS at ${this.nc.getServer()} has no room for ${EVENTS_STREAM}: ${sizes}, and the servers' JetStream ` +
      "storage cannot hold that: set Orchestrator.NATS.JetStreamMaxStore to what each server's JetStream can hold " +
      "(max_file_store), or give the servers more"
    );
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

  /**
   * Creates the stream with its replicas, or brings an existing one to the configured limits when they differ (a
   * change to a replicated stream is a round of agreement among its servers: not one on every start). Its replicas
   * are only ever set at creation: moving a stream's copies is an operator's decision, so a difference is logged.
   */
  private async ensureStream(): Promise<"created" | "updated" | "kept"> {
    const jsm = this.jsm as JetStreamManager;
    const config = this.streamConfig();
    let existing: StreamConfig | undefined;
    try {
      existing = (await jsm.streams.info(EVENTS_STREAM)).config;
    } catch (err) {
      // Only a stream JetStream says is gone is created; any other failure (JetStream busy or
      // down) is left to the retry, so a hiccup never replaces a live stream.
      if (!isStreamNotFound(err)) throw err;
      try {
        await jsm.streams.add({ ...config, num_replicas: this.replicas });
        this.logger.info({ stream: EVENTS_STREAM, replicas: this.replicas }, "created the cluster-event stream");
        return "created";
      } catch (e) {
        // Several orchestrators starting together: one creates it, the others bring it to this config below.
        if (jsErrorCode(e) !== STREAM_NAME_IN_USE) throw e;
      }
    }
    existing ??= (await jsm.streams.info(EVENTS_STREAM)).config;
    if (existing.num_replicas !== this.replicas)
      this.logger.warn(
        { stream: EVENTS_STREAM, replicas: existing.num_replicas, configured: this.replicas },
        `the cluster-event stream has ${existing.num_replicas} replica(s), not the ${this.replicas} configured; ` +
          `left as it is: on a NATS cluster of at least ${this.replicas} JetStream servers, all up, change it with ` +
          `\`nats stream edit ${EVENTS_STREAM} --replicas ${this.replicas}\`; a cluster holds at most one copy per ` +
          "server, so with fewer servers set Orchestrator.Cluster.Replicas to their number",
      );
    if (sameLimits(existing, config)) return "kept";
    try {
      await jsm.streams.update(EVENTS_STREAM, config);
    } catch (err) {
      // A stream made before purge was denied may refuse to change that on some servers.
      const { deny_purge: _p, deny_delete: _d, ...limits } = config;
      await jsm.streams.update(EVENTS_STREAM, limits);
      this.logger.warn(
        { err, stream: EVENTS_STREAM },
        "could not deny purge/delete on the existing event stream; recreate it to get that protection",
      );
    }
    return "updated";
  }

  trackCompletion(report: (position: number) => void): void {
    this.report = report;
  }

  /** Queues the batch; resolves once fewer than `window` events wait for their acks. */
  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    for (const { recorded: e } of batch) {
      // A batch delivered again after a failed handle() is already queued: queue each event once.
      if (e.position <= this.queuedUpTo) continue;
      this.queuedUpTo = e.position;
      const category = categoryOf(e.stream);
      // Every entity kind's events, and only those: workflow and bookkeeping streams are Shoal's own.
      const published = entityEventsOf(category) !== undefined;
      this.queue.push({
        event: e,
        category: published ? category : undefined,
        state: published ? "waiting" : "acked",
        sentAt: 0,
      });
    }
    this.advance();
    this.pump();
    while (this.queue.length - this.head >= this.window && !this.stopping)
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every queued event is acknowledged, or at the first failure once stopping. */
  async flush(): Promise<void> {
    this.stopping = true;
    this.notify();
    while (this.head < this.queue.length && this.paused === undefined)
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    this.disarmAckTimeout();
    this.stopped.abort();
    if (this.ownsDeadlines) this.deadlines.stop();
    this.ackSubscription?.unsubscribe();
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
      // The first unacknowledged event after a (re)start or a failure goes without an
      // expectation (it may be a re-send); nothing else goes before we know its predecessor.
      if (this.chainId === undefined && this.inFlight > 0) return;
      if (!this.send(entry, this.chainId)) return;
    }
  }

  /** False when it could not even be sent (then it is failed, and handled as any failure). */
  private send(entry: Entry, previousId: string | undefined): boolean {
    const e = entry.event;
    const h = headers();
    h.set("Nats-Msg-Id", e.id);
    if (previousId !== undefined) h.set("Nats-Expected-Last-Msg-Id", previousId);
    h.set("Shoal-Event-Type", e.type);
    h.set("Shoal-Position", String(e.position));
    if (this.logger.isLevelEnabled("debug"))
      this.logger.debug({ id: e.id, type: e.type, position: e.position }, "publishing cluster event");
    entry.payload ??= this.encoded.json(e);
    const token = this.nextToken++;
    try {
      this.nc.publish(eventSubject(entry.category as string, entityIdOf(e.stream), e.type), entry.payload, {
        reply: `${this.inbox}.${token}`,
        headers: h,
      });
    } catch (err) {
      // Closed, draining, or too large for the server: a failure of this event like any other.
      entry.state = "failed";
      entry.error = err;
      this.scheduleSettle();
      return false;
    }
    entry.state = "sent";
    entry.sentAt = this.clock.now();
    this.chainId = e.id;
    this.awaiting.set(token, entry);
    this.inFlight++;
    if (!this.ackArmed) this.armAckTimeout(this.ackTimeoutMs);
    return true;
  }

  /** A reply on the inbox: a PubAck, a JetStream API error, or no responders. */
  private receiveReply(msg: Msg): void {
    const token = Number(msg.subject.slice(this.inbox.length + 1));
    const entry = this.awaiting.get(token);
    if (entry === undefined) return; // sent before a failure; it is sent again
    this.awaiting.delete(token);
    this.inFlight--;
    const error = replyError(msg);
    if (error === undefined) entry.state = "acked";
    else {
      entry.state = "failed";
      entry.error = error;
    }
    this.scheduleSettle();
  }

  /** The replies of one socket read arrive in one synchronous run: settle them together after it. */
  private scheduleSettle(): void {
    if (this.settleScheduled) return;
    this.settleScheduled = true;
    queueMicrotask(this.settle);
  }

  private readonly settle = (): void => {
    this.settleScheduled = false;
    this.advance();
    this.pump();
  };

  /** Fails the oldest publish once it is unanswered for ackTimeoutMs; re-armed while any is in flight. */
  private readonly checkAckTimeout = (): void => {
    this.ackArmed = false;
    if (this.awaiting.size === 0) return;
    const oldest = this.queue[this.head] as Entry | undefined;
    const now = this.clock.now();
    if (oldest?.state === "sent" && now - oldest.sentAt >= this.ackTimeoutMs) {
      oldest.state = "failed";
      oldest.error = new PublishError(`no acknowledgement from JetStream within ${this.ackTimeoutMs} ms`, "TIMEOUT");
      this.settle();
      return;
    }
    const due = oldest?.state === "sent" ? oldest.sentAt + this.ackTimeoutMs - now : this.ackTimeoutMs;
    this.armAckTimeout(Math.max(1, due));
  };

  private armAckTimeout(inMs: number): void {
    this.ackArmed = true;
    this.deadlines.set(ACK_TIMEOUT, this.clock.now() + inMs, this.checkAckTimeout);
  }

  private disarmAckTimeout(): void {
    this.ackArmed = false;
    this.deadlines.cancel(ACK_TIMEOUT);
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
      if (entry.category !== undefined) {
        this.lastId = entry.event.id;
        delete entry.payload;
      }
      this.head++;
    }
    if (this.head === start) return;
    // Unpublished events are acknowledged as they are queued, so the prefix can run past the next
    // event to send while the window is full; sending resumes after the prefix, never inside it.
    if (this.sendIndex < this.head) this.sendIndex = this.head;
    this.retryDelayMs = RETRY_DELAY_MS;
    this.failingSince = undefined;
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
    this.awaiting.clear(); // replies to what is in flight are ignored: it is all sent again
    this.inFlight = 0;
    this.disarmAckTimeout();
    this.lastId = undefined; // what follows was refused or may be out of order: re-send from here
    this.chainId = undefined;
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
    this.failingSince ??= this.clock.now();
    const resume = async () => {
      // No stream takes the subject: it is gone (put it back and carry on from the last ack), or a replicated one is
      // electing a new leader (it is there: wait as after any failure).
      const how = streamGone ? await this.streamMade(delay) : undefined;
      if (this.stopped.signal.aborted) return;
      if (how === "created") {
        this.logger.warn(
          { stream: EVENTS_STREAM, how: "created", position },
          "the cluster-event stream was missing; recreated it and resumed from the checkpoint",
        );
        return;
      }
      this.logFailure(
        { err, position, retryInMs: delay },
        "could not publish a cluster event; resuming after a pause from the last acknowledged one",
      );
      await this.deadlines.sleep(RESUME, delay, this.stopped.signal);
    };
    this.resumeAfter(resume());
  }

  /**
   * A replicated stream electing a leader refuses publishes for a few seconds, which the retries ride out: a warning
   * with the error's message. Failing for longer is an outage subscribers notice: an error, with the stack.
   */
  private logFailure(fields: { err: unknown } & Record<string, unknown>, message: string): void {
    const failingForMs = this.clock.now() - (this.failingSince ?? this.clock.now());
    if (failingForMs >= ESCALATE_AFTER_MS) return this.logger.error({ ...fields, failingForMs }, message);
    const { err, ...rest } = fields;
    this.logger.warn({ ...rest, error: err instanceof Error ? err.message : String(err), failingForMs }, message);
  }

  /** Publishing is suspended until `until` settles, then goes on unless stopped meanwhile. */
  private resumeAfter(until: Promise<unknown>): void {
    const paused = until.then(
      () => undefined,
      (err: unknown) => this.logger.error({ err }, "the pause before publishing again failed; publishing goes on"),
    );
    this.paused = paused;
    void paused.then(() => {
      // Stopped meanwhile: flush() has returned; nothing more is sent.
      if (this.stopped.signal.aborted) return;
      this.paused = undefined;
      this.pump();
    });
  }

  /**
   * Tries until the stream is there with its limits, pausing (doubling from `delayMs`) between tries: publishing into
   * a stream made meanwhile by someone else, before its limits are applied, would lose its duplicate window.
   * Undefined once stopped.
   */
  private async streamMade(delayMs: number): Promise<"created" | "updated" | "kept" | undefined> {
    for (let delay = delayMs; !this.stopped.signal.aborted; delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS)) {
      try {
        return await this.ensureStream();
      } catch (err) {
        this.logFailure(
          { err, stream: EVENTS_STREAM, retryInMs: delay },
          "could not recreate the cluster-event stream; retrying after a pause",
        );
        await this.deadlines.sleep(RESUME, delay, this.stopped.signal);
      }
    }
    return undefined;
  }
}

/** Whether the stream already has every setting of `wanted` (its replicas aside). */
function sameLimits(existing: StreamConfig, wanted: Partial<StreamConfig>): boolean {
  return Object.entries(wanted).every(([key, value]) => {
    const has = existing[key as keyof StreamConfig];
    return Array.isArray(value) ? JSON.stringify(has) === JSON.stringify(value) : has === value;
  });
}

/**
 * Undefined for a PubAck (a duplicate's too); otherwise the failure, shaped as nats.js's JetStream publish throws it.
 */
function replyError(msg: Msg): PublishError | undefined {
  if (msg.data.length === 0) {
    const code = msg.headers?.code ?? 0;
    if (code === 503) return new PublishError("no responders: no stream takes the subject", "503");
    return new PublishError(
      `empty reply to a JetStream publish (status ${code} ${msg.headers?.description ?? ""})`,
      String(code),
    );
  }
  let reply: { stream?: string; error?: { code: number; err_code?: number; description?: string } };
  try {
    reply = JSON.parse(decoder.decode(msg.data)) as typeof reply;
  } catch {
    return new PublishError("a JetStream publish was answered with something that is not JSON", "BAD_REPLY");
  }
  if (reply.error !== undefined)
    return new PublishError(
      reply.error.description ?? "JetStream refused the publish",
      String(reply.error.code),
      reply.error,
    );
  if (typeof reply.stream !== "string" || reply.stream === "")
    return new PublishError("invalid JetStream publish acknowledgement", "BAD_REPLY");
  return undefined;
}
