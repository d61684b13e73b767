import { entityEventsOf } from "../../src/events/catalog/entity-events.ts";
import type { NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { categoryOf } from "../../src/events/streams.ts";
import { EventEnvelope, type DomainEvent } from "../../src/projections/event-envelope.ts";

const TIME = "2026-01-01T00:00:00.000Z";

/** `event` as a store hands it back on `stream`: encoded by its kind's codec, so it decodes as stored events do. */
export function recordedEvent(stream: string, event: DomainEvent, position = 1): RecordedEvent {
  const metadata = { time: TIME, actor: { type: "system" as const, id: "test" }, correlationId: "c", causationId: "c" };
  const id = `id-${stream}-${event.type}`;
  const events = entityEventsOf(categoryOf(stream));
  if (events === undefined) throw new Error(`${stream} is no entity kind's stream`);
  // The kind's own encode: its type is the stream's kind's, as in a real store.
  const encode = events.encode as (e: DomainEvent, m: typeof metadata, id: string) => NewEvent;
  const stored = encode(event, metadata, id);
  return { ...stored, stream, revision: 0, position, time: TIME };
}

/** The envelope a processor receives for `event` stored on `stream`. */
export const envelopeOf = (stream: string, event: DomainEvent, position = 1): EventEnvelope =>
  new EventEnvelope(recordedEvent(stream, event, position));
