import {
  type AnyEntityEvents,
  type DomainEvent,
  type EventOf,
  entityEventsOf,
} from "../events/catalog/entity-events.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../events/streams.ts";

export type { DomainEvent } from "../events/catalog/entity-events.ts";

const NOT_DECODED: unique symbol = Symbol("not decoded");

/**
 * A stored event as processors receive it: the recorded event and its decoded domain event.
 * Decoding happens on first use and is kept, so one envelope shared by every processor is
 * decoded at most once, and processors that never look (the publisher) never pay for it.
 */
export class EventEnvelope {
  private decoded: DomainEvent | undefined | typeof NOT_DECODED = NOT_DECODED;

  constructor(readonly recorded: RecordedEvent) {}

  get position(): number {
    return this.recorded.position;
  }

  get stream(): string {
    return this.recorded.stream;
  }

  /** The entity whose stream holds the event (a node's, a job's or an execution's id). */
  get entityId(): string {
    return entityIdOf(this.recorded.stream);
  }

  /** When it was recorded (ISO-8601). */
  get time(): string {
    return this.recorded.time;
  }

  /**
   * The domain event, decoded by its kind's codec (ENTITY_EVENTS); undefined for a category of no
   * registered kind. Throws CorruptEventError for a stored event its schema rejects (every time asked);
   * for the data of a type its kind decodes on read (a node event its fold does not read), when that data is read.
   */
  get event(): DomainEvent | undefined {
    if (this.decoded === NOT_DECODED) {
      const events = entityEventsOf(categoryOf(this.recorded.stream));
      this.decoded = events === undefined ? undefined : events.decodeForProcessors(this.recorded);
    }
    return this.decoded;
  }

  /** The event when it is of `type`, typed as such; undefined (and nothing decoded) when it is not. */
  as<T extends DomainEvent["type"]>(type: T): Extract<DomainEvent, { readonly type: T }> | undefined {
    if (this.recorded.type !== type) return undefined;
    // Type names are unique across kinds: a category's codec yields only its own kind's types.
    return this.event as Extract<DomainEvent, { readonly type: T }> | undefined;
  }

  /** The event when its stream is of `events`' kind (`envelope.of(nodeEvents)`), typed as such; undefined otherwise. */
  of<Events extends AnyEntityEvents>(events: Events): EventOf<Events> | undefined {
    // A kind's codec decodes only its own kind's events.
    return categoryOf(this.recorded.stream) === events.category ? (this.event as EventOf<Events>) : undefined;
  }
}
