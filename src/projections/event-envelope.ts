import { EVOLVE_READS_NO_DATA } from "../../machines/node/evolve-node.ts";
import { decodeNodeEventForFold } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import { NODE_CATEGORY, categoryOf } from "../events/streams.ts";

/** A domain event of any category the catalog has a codec for. */
export type DomainEvent = NodeEvent;

const CODECS: Readonly<Record<string, (recorded: RecordedEvent) => DomainEvent>> = {
  // Data the read model's fold does not read is decoded (and checked) when a processor reads it.
  [NODE_CATEGORY]: (recorded) => decodeNodeEventForFold(recorded, EVOLVE_READS_NO_DATA),
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
}
