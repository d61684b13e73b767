import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { EventStore } from "../../events/store/event-store.ts";

const PAGE = 2_048;

/**
 * The end of the log as of `time` (epoch ms): the last position up to which no event's time is later than `time`,
 * 0 when the first one already is (EventStore.positionAt). Event times are when each was decided, so store order and
 * time order can differ by the moments an append waited; the running maximum makes the answer a prefix of the log,
 * which a fold turns into a state the cluster was in. A store without a time index is read from the start.
 */
export async function positionAsOf(store: EventStore, time: number): Promise<number> {
  const indexed = await store.positionAt(time);
  if (indexed !== undefined) return indexed;
  let max = Number.NEGATIVE_INFINITY;
  let through = 0;
  for await (const page of store.readAllPages({ pageSize: PAGE })) {
    for (const e of page) {
      const t = Date.parse(e.time);
      if (t > max) max = t;
      if (max > time) return through;
      through = e.position;
    }
    await yieldToEventLoop();
  }
  return through;
}
