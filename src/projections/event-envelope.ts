import { EVOLVE_READS_NO_DATA } from "../../machines/node/evolve-node.ts";
import { decodeExecutionEvent } from "../events/catalog/execution-event-codec.ts";
import type { ExecutionEvent } from "../events/catalog/execution-events.ts";
import { decodeJobEvent } from "../events/catalog/job-event-codec.ts";
import type { JobEvent } from "../events/catalog/job-events.ts";
import { decodeNodeEventForFold } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import { EXECUTION_CATEGORY, JOB_CATEGORY, NODE_CATEGORY, categoryOf, entityIdOf } from "../events/streams.ts";

/**
 * A domain event of any entity kind: event type names are unique across kinds, so `type` alone
 * narrows it to its kind's event and data.
 */
export type DomainEvent = NodeEvent | JobEvent | ExecutionEvent;

/** Each entity kind's codec, by stream category: the one place a stored event becomes a domain event. */
const CODECS: Readonly<Record<string, (recorded: RecordedEvent) => DomainEvent>> = {
  // Data the read model's fold does not read is decoded (and checked) when a processor reads it.
  [NODE_CATEGORY]: (recorded) => decodeNodeEventForFold(recorded, EVOLVE_READS_NO_DATA),
  [JOB_CATEGORY]: decodeJobEvent,
  [EXECUTION_CATEGORY]: decodeExecutionEvent,
};

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
   * The domain event, checked by its category's schema; undefined for a category without a
   * codec. Throws CorruptEventError for a stored event its schema rejects (every time asked);
   * for the data of a node event its fold does not read, when that data is read.
   */
  get event(): DomainEvent | undefined {
    if (this.decoded === NOT_DECODED) {
      const codec = CODECS[categoryOf(this.recorded.stream)];
      this.decoded = codec === undefined ? undefined : codec(this.recorded);
    }
    return this.decoded;
  }

  /** The event when it is of `type`, typed as such; undefined (and nothing decoded) when it is not. */
  as<T extends DomainEvent["type"]>(type: T): Extract<DomainEvent, { readonly type: T }> | undefined {
    if (this.recorded.type !== type) return undefined;
    // Type names are unique across kinds: a category's codec yields only its own kind's types.
    return this.event as Extract<DomainEvent, { readonly type: T }> | undefined;
  }

  /** The event of a node stream, typed as such; undefined for any other stream. */
  get nodeEvent(): NodeEvent | undefined {
    return this.kindEvent<NodeEvent>(NODE_CATEGORY);
  }

  get jobEvent(): JobEvent | undefined {
    return this.kindEvent<JobEvent>(JOB_CATEGORY);
  }

  get executionEvent(): ExecutionEvent | undefined {
    return this.kindEvent<ExecutionEvent>(EXECUTION_CATEGORY);
  }

  private kindEvent<E extends DomainEvent>(category: string): E | undefined {
    // The codec of a category decodes only its own kind's events (CODECS above).
    return categoryOf(this.recorded.stream) === category ? (this.event as E) : undefined;
  }
}
