import { expect } from "vitest";
import type { EventFilter, EventStore, RecordedEvent } from "../../src/events/store/event-store.ts";
import { naiveMatch, readAllFilteredPages } from "./skewed-log.ts";

/**
 * For every filter (each must match something) and every [after, limit]: the filter's pages read at `limit` from
 * `after` to the head hold exactly the positions after `after` that the naive filter finds among all the store's
 * events, in order.
 */
export async function expectPagesAsNaive(
  store: EventStore,
  filters: readonly EventFilter[],
  cases: readonly (readonly [after: number, limit: number])[],
): Promise<void> {
  const all: RecordedEvent[] = await store.readAll({ after: 0, maxCount: 100_000 });
  const through = (all.at(-1) as RecordedEvent).position;
  for (const filter of filters) {
    expect(
      all.some((e) => naiveMatch(e, filter)),
      JSON.stringify(filter),
    ).toBe(true);
    for (const [after, limit] of cases) {
      const { events } = await readAllFilteredPages(store, filter, { after, through, limit });
      expect(
        events.map((e) => e.position),
        JSON.stringify({ filter, after, limit }),
      ).toEqual(all.filter((e) => e.position > after && naiveMatch(e, filter)).map((e) => e.position));
    }
  }
}
