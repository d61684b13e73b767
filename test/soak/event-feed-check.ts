import { ENTITY_EVENTS } from "../../src/events/catalog/entity-events.ts";
import { categoryOf } from "../../src/events/streams.ts";
import type { ReadEvent } from "./events-reader.ts";
import type { StoreEvent } from "./store-events.ts";

/**
 * The categories whose events go to SHOAL_EVENTS (docs/protocol.md, cluster events): every entity kind's; the rest
 * stays in the store.
 */
export const PUBLISHED_CATEGORIES: ReadonlySet<string> = new Set(ENTITY_EVENTS.map((events) => events.category));

export interface EventFeedComparison {
  /** Publishable store events up to the compared position. */
  readonly stored: number;
  /** Distinct JetStream messages the reader got up to that position (redeliveries of one message count once). */
  readonly read: number;
  readonly missing: readonly StoreEvent[];
  /** Events that JetStream holds more than once (different stream sequences, the same event id). */
  readonly duplicated: readonly ReadEvent[];
  /** Messages whose store position is not above the one before them, in stream order (duplicates aside). */
  readonly outOfOrder: readonly { readonly after: ReadEvent; readonly event: ReadEvent }[];
  /** Messages whose event id the store does not hold, or holds with another position, stream or type. */
  readonly unknown: readonly ReadEvent[];
}

/**
 * The downstream reader's sequence against the store's publishable events, up to `upTo` (the
 * store's head when the reader had caught up with it): each event once, in store order, none
 * missing, none the store does not hold.
 */
export function compareEventFeeds(
  store: readonly StoreEvent[],
  received: readonly ReadEvent[],
  upTo: number,
): EventFeedComparison {
  const publishable = store.filter((e) => e.position <= upTo && PUBLISHED_CATEGORIES.has(categoryOf(e.stream)));
  const bySeq = new Map<number, ReadEvent>();
  for (const r of received) if (!bySeq.has(r.seq)) bySeq.set(r.seq, r);
  const inStreamOrder = [...bySeq.values()].sort((a, b) => a.seq - b.seq).filter((r) => r.position <= upTo);
  const storedById = new Map(publishable.map((e) => [e.id, e]));
  const seenIds = new Set<string>();
  const duplicated: ReadEvent[] = [];
  const outOfOrder: { after: ReadEvent; event: ReadEvent }[] = [];
  const unknown: ReadEvent[] = [];
  let previous: ReadEvent | undefined;
  for (const r of inStreamOrder) {
    if (seenIds.has(r.id)) {
      duplicated.push(r);
      continue;
    }
    seenIds.add(r.id);
    const stored = storedById.get(r.id);
    const asStored = stored?.position === r.position && stored.stream === r.stream && stored.type === r.type;
    if (!asStored) unknown.push(r);
    if (previous !== undefined && r.position <= previous.position) outOfOrder.push({ after: previous, event: r });
    previous = r;
  }
  const missing = publishable.filter((e) => !seenIds.has(e.id));
  return { stored: publishable.length, read: inStreamOrder.length, missing, duplicated, outOfOrder, unknown };
}
