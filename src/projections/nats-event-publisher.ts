import { DiscardPolicy, headers, type JetStreamClient, type JetStreamManager, type JetStreamPublishOptions, type NatsConnection, type PubAck, type StreamConfig } from "nats";
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

/** JetStream publishes in flight at once, at most. */
export const DEFAULT_PUBLISH_WINDOW = 256;

interface InFlight {
  readonly event: RecordedEvent;
  /** Undefined for an event of a category that is not published. */
  readonly ack: Promise<PubAck> | undefined;
}

/**
 * Publishes every stored event, in store order, to JetStream stream SHOAL_EVENTS as JSON on
 * shoal.events.<category>.<id>.<Type>, with Nats-Msg-Id = event id. A processor: its host
 * moves the persisted checkpoint past a batch only once every event in it is acknowledged.
 *
 * Pipelined: up to `window` publishes are in flight, their acks awaited in order. Order is
 * kept even when one fails while later ones are in flight (a reconnect can lose one and not
 * the next): each publish expects the previous event's id to be the stream's last, so
 * JetStream refuses everything after a lost one. After a failure the batch fails, the host
 * waits and delivers it again, and publishing resumes after the last acknowledged event with
 * one publish on its own (no expectation: it may be a re-send, which the duplicate window
 * drops) before the window opens again.
 */
export class NatsEventPublisher implements Processor {
  readonly name = CHECKPOINT;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly encoder = new TextEncoder();
  /** Everything up to here is acknowledged (a batch delivered again skips it). */
  private acked = 0;
  /** The id of the last event JetStream stored from us while the chain is unbroken. */
  private lastId: string | undefined;

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

  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    try {
      await this.publishAll(batch);
    } catch (err) {
      // 503 with no JetStream error: no stream takes the subject any more (a full stream also
      // answers 503, with its own error). Put it back and carry on from the last ack.
      if ((err as { code?: string }).code !== "503" || jsErrorCode(err) !== undefined) throw err;
      const how = await this.ensureStream();
      this.logger.warn({ stream: EVENTS_STREAM, how, position: this.acked }, "the cluster-event stream was missing; recreated it and resumed from the checkpoint");
      await this.publishAll(batch);
    }
  }

  private async publishAll(batch: readonly EventEnvelope[]): Promise<void> {
    const inFlight: InFlight[] = [];
    let head = 0;
    const settleOldest = async () => {
      const { event, ack } = inFlight[head++] as InFlight;
      if (ack) {
        try {
          await ack;
        } catch (err) {
          this.lastId = undefined; // whatever follows was refused or may be out of order: re-send from here
          throw err;
        }
        this.lastId = event.id;
      }
      this.acked = event.position;
    };
    // The id JetStream must hold last when the next publish arrives; undefined: unknown.
    let previous = this.lastId;
    for (const { recorded: e } of batch) {
      if (e.position <= this.acked) continue;
      const category = categoryOf(e.stream);
      if (!PUBLISHED_CATEGORIES.has(category)) {
        inFlight.push({ event: e, ack: undefined });
        continue;
      }
      const ack = this.send(e, category, previous);
      ack.catch(() => undefined); // awaited in order by settleOldest; a later one may fail first
      inFlight.push({ event: e, ack });
      // After a (re)start or a failure the first publish goes alone: the chain starts at its ack.
      if (previous === undefined) while (head < inFlight.length) await settleOldest();
      previous = e.id;
      while (inFlight.length - head >= this.window) await settleOldest();
    }
    while (head < inFlight.length) await settleOldest();
  }

  private send(e: RecordedEvent, category: string, previousId: string | undefined): Promise<PubAck> {
    const h = headers();
    h.set("Shoal-Event-Type", e.type);
    h.set("Shoal-Position", String(e.position));
    const options: Partial<JetStreamPublishOptions> = { msgID: e.id, headers: h };
    if (previousId !== undefined) options.expect = { lastMsgID: previousId };
    if (this.logger.isLevelEnabled("debug")) this.logger.debug({ id: e.id, type: e.type, position: e.position }, "publishing cluster event");
    return (this.js as JetStreamClient).publish(eventSubject(category, entityIdOf(e.stream), e.type), this.encoder.encode(JSON.stringify(toClusterEvent(e))), options);
  }
}
