import type { EventFilter, EventStore, RecordedEvent } from "../../events/store/event-store.ts";
import { toClusterEvent, type ClusterEvent } from "../cluster-event.ts";
import { storeActorsOf, type FeedActor } from "./feed-actors.ts";
import { DEFAULT_FEED_CATEGORIES, FEED_CATEGORIES, typesOfCategory } from "./feed-categories.ts";

/**
 * What a reader of the cluster's history asks for. Each list is a choice of one of its values; the parts given must
 * all hold. The caller has checked the names (FEED_CATEGORIES, known types, FEED_ACTOR_TYPES).
 */
export interface FeedFilter {
  /** Absent or empty: DEFAULT_FEED_CATEGORIES. */
  readonly categories?: readonly string[];
  /** Entity ids: a node's, a job's, an execution's (or a workflow's name), in whichever of the categories. */
  readonly entities?: readonly string[];
  readonly types?: readonly string[];
  readonly actors?: readonly FeedActor[];
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, inclusive. */
  readonly until?: number;
}

/** The store's filter for a feed filter: categories become types, entities their streams, actors their aliases. */
export function storeFilterOf(filter: FeedFilter): EventFilter {
  const categories = filter.categories?.length ? [...new Set(filter.categories)] : DEFAULT_FEED_CATEGORIES;
  const everyCategory = FEED_CATEGORIES.every((c) => categories.includes(c));
  const categoryTypes = categories.flatMap(typesOfCategory);
  // Asked types outside the categories match nothing (the API refuses such a question before it gets here).
  const types = filter.types?.length ? filter.types.filter((t) => categoryTypes.includes(t)) : undefined;
  return {
    // Every category asked for: no type condition at all, so the store reads one range instead of one per type.
    ...(types !== undefined ? { types } : everyCategory ? {} : { types: categoryTypes }),
    ...(filter.entities?.length
      ? { streams: filter.entities.flatMap((id) => categories.map((category) => `${category}-${id}`)) }
      : {}),
    ...(filter.actors?.length ? { actors: filter.actors.flatMap(storeActorsOf) } : {}),
    ...(filter.since === undefined ? {} : { since: filter.since }),
    ...(filter.until === undefined ? {} : { until: filter.until }),
  };
}

export interface FeedPage {
  readonly items: ClusterEvent[];
  /** Where the next page starts (an exclusive position); undefined when the selection has no more. */
  readonly next: number | undefined;
}

/** Events an export reads from the store at a time. */
const EXPORT_PAGE = 500;

/**
 * The whole history of the cluster, filtered, in store order: pages with a cursor by position, or every matching
 * event for an export. Read straight from the store, the auditor's source of truth.
 */
export class EventFeed {
  constructor(private readonly store: EventStore) {}

  /** The newest position stored: `after` beyond it asks for events that do not exist yet. */
  head(): Promise<number> {
    return this.store.headPosition();
  }

  /** Up to `limit` events after `after`. */
  async page(filter: FeedFilter, after: number, limit: number): Promise<FeedPage> {
    const through = await this.store.headPosition();
    if (after >= through) return { items: [], next: undefined };
    // One more than asked: whether there is a next page is known without a read that finds nothing.
    const page = await this.store.readFiltered(storeFilterOf(filter), { after, through, maxCount: limit + 1 });
    const items = page.events.slice(0, limit).map(toClusterEvent);
    if (page.events.length > limit) return { items, next: items.at(-1)!.position };
    // A scanning store may end a page before its bound: the rest is read from where it got to.
    return { items, next: page.scannedThrough < through ? page.scannedThrough : undefined };
  }

  /**
   * Every matching event after `after`, up to the head as it is when the export starts (so an export of a busy
   * cluster ends), a page at a time: only the page being sent is held.
   */
  async *export(filter: FeedFilter, after: number): AsyncGenerator<readonly RecordedEvent[]> {
    const through = await this.store.headPosition();
    const storeFilter = storeFilterOf(filter);
    let cursor = after;
    while (cursor < through) {
      const page = await this.store.readFiltered(storeFilter, { after: cursor, through, maxCount: EXPORT_PAGE });
      if (page.events.length > 0) yield page.events;
      const reached = page.events.length === EXPORT_PAGE ? page.events.at(-1)!.position : page.scannedThrough;
      // A store that got nowhere would loop for ever: what it answered is all there is.
      if (reached <= cursor) return;
      cursor = reached;
    }
  }
}
