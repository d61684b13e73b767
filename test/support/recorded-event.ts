import { encodeExecutionEvent } from "../../src/events/catalog/execution-event-codec.ts";
import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { encodeJobEvent } from "../../src/events/catalog/job-event-codec.ts";
import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import type { NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { JOB_CATEGORY, NODE_CATEGORY, categoryOf } from "../../src/events/streams.ts";
import { EventEnvelope, type DomainEvent } from "../../src/projections/event-envelope.ts";

const TIME = "2026-01-01T00:00:00.000Z";

/** `event` as its entity's actor appends it to `stream`: encoded by its kind's codec. */
export function encodedEvent(stream: string, event: DomainEvent): NewEvent {
  const metadata = { time: TIME, actor: { type: "system" as const, id: "test" }, correlationId: "c", causationId: "c" };
  const id = `id-${stream}-${event.type}`;
  const category = categoryOf(stream);
  return category === NODE_CATEGORY
    ? encodeNodeEvent(event as NodeEvent, metadata, id)
    : category === JOB_CATEGORY
      ? encodeJobEvent(event as JobEvent, metadata, id)
      : encodeExecutionEvent(event as ExecutionEvent, metadata, id);
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
