import { entityEventsOf } from "../../src/events/catalog/entity-events.ts";
import type { NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { categoryOf } from "../../src/events/streams.ts";
import { EventEnvelope, type DomainEvent } from "../../src/projections/event-envelope.ts";

const TIME = "2026-01-01T00:00:00.000Z";

/** `event` as its entity's actor appends it to `stream`: encoded by its kind's codec. */
export function encodedEvent(stream: string, event: DomainEvent): NewEvent {
  const metadata = { time: TIME, actor: { type: "system" as const, id: "test" }, correlationId: "c", causationId: "c" };
  const id = `id-${stream}-${event.type}`;
  const events = entityEventsOf(categoryOf(stream));
  if (events === undefined) throw new Error(`${stream} is no entity kind's stream`);
  // The kind's own encode: its type is the stream's kind's, as in a real store.
  const encode = events.encode as (e: DomainEvent, m: typeof metadata, id: string) => NewEvent;
  return encode(event, metadata, id);
}

/** `event` as a store hands it back on `stream`: encoded by its kind's codec, so it decodes as stored events do. */
export function recordedEvent(stream: string, event: DomainEvent, position = 1): RecordedEvent {
  return { ...encodedEvent(stream, event), stream, revision: 0, position, time: TIME };
}

/** An envelope of `recorded` whose stored data counts how often it is read (SQLite's is a getter that parses). */
export function countedReads(recorded: RecordedEvent): { envelope: EventEnvelope; reads: () => number } {
  let reads = 0;
  const data = recorded.data;
  const envelope = new EventEnvelope({
    ...recorded,
    get data() {
      reads++;
      return data;
    },
  });
  return { envelope, reads: () => reads };
}

/** The envelope a processor receives for `event` stored on `stream`. */
export const envelopeOf = (stream: string, event: DomainEvent, position = 1): EventEnvelope =>
  new EventEnvelope(recordedEvent(stream, event, position));
