import type { RecordedEvent } from "../events/store/event-store.ts";

/** The JSON every downstream system receives, on NATS and over HTTP. */
export interface ClusterEvent {
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly time: string;
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export function toClusterEvent(e: RecordedEvent): ClusterEvent {
  return { id: e.id, type: e.type, stream: e.stream, revision: e.revision, position: e.position, time: e.time, data: e.data, metadata: e.metadata };
}
