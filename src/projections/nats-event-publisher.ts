import { headers, type JetStreamClient, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { CheckpointStore, EventStore, RecordedEvent } from "../events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../events/streams.ts";
import { EVENTS_STREAM, EVENTS_SUBJECTS, eventSubject } from "../transport/subjects.ts";
import { toClusterEvent } from "./cluster-event.ts";
import { ProjectionRunner } from "./projection-runner.ts";

const CHECKPOINT = "nats-event-publisher";
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
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly nc: NatsConnection,
    store: EventStore,
    checkpoints: CheckpointStore,
    private readonly logger: Logger,
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
    const jsm = await this.nc.jetstreamManager().catch((err: unknown) => {
      throw new Error(`NATS at ${this.nc.getServer()} has no JetStream, which cluster events need (start nats-server with -js): ${String(err)}`);
    });
    const config = { name: EVENTS_STREAM, subjects: [EVENTS_SUBJECTS], duplicate_window: DUPLICATE_WINDOW_NS };
    try {
      await jsm.streams.info(EVENTS_STREAM);
      await jsm.streams.update(EVENTS_STREAM, config);
    } catch {
      await jsm.streams.add(config);
    }
    this.js = this.nc.jetstream();
    await this.runner.start();
  }

  private async publish(e: RecordedEvent): Promise<void> {
    const category = categoryOf(e.stream);
    if (!PUBLISHED_CATEGORIES.has(category) || !this.js) return;
    const h = headers();
    h.set("Shoal-Event-Type", e.type);
    h.set("Shoal-Position", String(e.position));
    await this.js.publish(eventSubject(category, entityIdOf(e.stream), e.type), this.encoder.encode(JSON.stringify(toClusterEvent(e))), {
      msgID: e.id,
      headers: h,
    });
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
