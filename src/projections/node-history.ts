import type { EventStore } from "../events/store/event-store.ts";
import { nodeStream } from "../events/streams.ts";
import { toClusterEvent, type ClusterEvent } from "./cluster-event.ts";

/** A node's full history straight from its stream: the store is the auditor's source of truth. */
export class NodeHistory {
  constructor(private readonly store: EventStore) {}

  /** One page from `fromRevision`; `next` is the revision to continue from, if there is more. */
  async page(
    nodeId: string,
    fromRevision: number,
    limit: number,
  ): Promise<{ items: ClusterEvent[]; next: number | undefined }> {
    const events = await this.store.readStream(nodeStream(nodeId), { fromRevision, maxCount: limit + 1 });
    const items = events.slice(0, limit).map(toClusterEvent);
    const next = events.length > limit ? events[limit]?.revision : undefined;
    return { items, next };
  }
}
