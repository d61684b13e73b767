import type { RecordedEvent } from "../events/store/event-store.ts";

/**
 * The JSON every downstream system receives, on NATS and over HTTP: a stored event's fields,
 * copied one by one so that nothing an adapter adds leaks into the public shape.
 */
export type ClusterEvent = RecordedEvent;

export function toClusterEvent(e: RecordedEvent): ClusterEvent {
  return {
    id: e.id,
    type: e.type,
    stream: e.stream,
    revision: e.revision,
    position: e.position,
    time: e.time,
    data: e.data,
    metadata: e.metadata,
  };
}
