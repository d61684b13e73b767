import { DiscardPolicy, headers, type JetStreamClient, type JetStreamManager, type NatsConnection, type StreamConfig } from "nats";
import type { Logger } from "pino";
import type { CheckpointStore, EventStore, RecordedEvent } from "../events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../events/streams.ts";
import { EVENTS_STREAM, EVENTS_SUBJECTS, eventSubject } from "../transport/subjects.ts";
import { toClusterEvent } from "./cluster-event.ts";
import { ProjectionRunner } from "./projection-runner.ts";

const CHECKPOINT = "nats-event-publisher";
const STREAM_NOT_FOUND = 10059;
const INSUFFICIENT_RESOURCES = 10047;
/** JetStream's own error code of a failed API call (undefined for a transport failure). */
const jsErrorCode = (err: unknown): number | undefined => (err as { api_error?: { err_code?: number } }).api_error?.err_code;
const isStreamNotFound = (err: unknown) => jsErrorCode(err) === STREAM_NOT_FOUND;
const PUBLISHED_CATEGORIES = new Set(["node", "job", "execution"]);
// JetStream drops a re-published event id within this window: resends after a crash are not seen twice.
const DUPLICATE_WINDOW_NS = 60 * 60 * 1_000_000_000;

/**
 * Publishes every stored event, in store order, to JetStream stream SHOAL_EVENTS as JSON on
 * shoal.events.<category>.<id>.<Type>, with Nats-Msg-Id = event id. An event counts as published
 * when JetStream acknowledges it; only then does the persisted checkpoint move past it.
 */
export class NatsEventPublisher {
  private readonly runner: ProjectionRunner;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly nc: NatsConnection,
    store: EventStore,
    checkpoints: CheckpointStore,
    private readonly logger: Logger,
    /** JetStream keeps the newest events within this many bytes; the event store keeps them all. */
    private readonly maxBytes: number,
  ) {
    this.runner = new ProjectionRunner({
      name: CHECKPOINT,
      store,
      logger,
      checkpoints,
      handle: (e) => this.publish(e),
      resubscribeDelayMs: 1000,
    });
  }

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
    await this.runner.start();
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

  private async publish(e: RecordedEvent): Promise<void> {
    const category = categoryOf(e.stream);
    if (!PUBLISHED_CATEGORIES.has(category) || !this.js) return;
    const h = headers();
    h.set("Shoal-Event-Type", e.type);
    h.set("Shoal-Position", String(e.position));
    const send = () =>
      (this.js as JetStreamClient).publish(eventSubject(category, entityIdOf(e.stream), e.type), this.encoder.encode(JSON.stringify(toClusterEvent(e))), {
        msgID: e.id,
        headers: h,
      });
    try {
      await send();
    } catch (err) {
      // 503: no stream takes the subject any more. Put it back and carry on from here.
      if ((err as { code?: string }).code !== "503") throw err;
      const how = await this.ensureStream();
      this.logger.warn({ stream: EVENTS_STREAM, how, position: e.position }, "the cluster-event stream was missing; recreated it and resumed from the checkpoint");
      await send();
    }
    this.logger.debug({ id: e.id, type: e.type, position: e.position }, "published cluster event");
  }

  get position(): number {
    return this.runner.currentPosition;
  }

  waitFor(position: number | undefined, timeoutMs?: number): Promise<void> {
    return this.runner.waitFor(position, timeoutMs);
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }
}
