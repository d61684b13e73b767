import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { RecordedEvent, StoreSubscription } from "./event-store.ts";

/**
 * A catch-up subscription built from a paged reader and a "something was appended" signal.
 * Used by adapters whose store has no native subscription (SQLite). A handler that returns
 * nothing is not awaited, and the loop yields to the event loop after every full page: a reader
 * that answers synchronously (SQLite) would otherwise run a whole catch-up in one macrotask,
 * starving timers, NATS and HTTP until it ends. It yields before it asks for the next page, not
 * after: asked for at once, a synchronous reader reads the next page there and then, before the
 * processors this page woke have folded it, so every page would wait a fold and a turn between
 * its read and its own fold instead of being folded as soon as it is read.
 *
 * Each pass reads from the last position delivered to the end of the store. A pass that saw no
 * commit of this process while it ran has read all of them, so it waits at once: once woken,
 * the store is read once, not a second time to find it empty. That is most of the cost of
 * following a store whose appends come one commit at a time.
 */
export function pollingSubscription(options: {
  after: number;
  /**
   * Every event after `after` as the store holds it now, in pages (a catch-up may read ahead: EventStore.readAllPages).
   */
  readPages: (after: number) => AsyncIterable<readonly RecordedEvent[]>;
  /**
   * The most events a page of readPages holds. A shorter page is nearly always a pass's last, and no turn of the
   * event loop follows it: a subscription that follows commits one at a time waits at once.
   */
  pageSize: number;
  /** How many commits that stored events this process has made so far (it only grows). */
  commits: () => number;
  /**
   * Resolves once `commits()` differs from `seen` (at once when it already does), after a poll
   * interval (another process may write), or when `signal` aborts.
   */
  waitForAppend: (seen: number, signal: AbortSignal) => Promise<void>;
  handler: (event: RecordedEvent) => Promise<void> | void;
}): StoreSubscription {
  const abort = new AbortController();
  let position = options.after;
  const done = (async () => {
    while (!abort.signal.aborted) {
      // Taken before the first read: a commit made after it is read again, even one the pass may have seen.
      const seen = options.commits();
      for await (const batch of options.readPages(position)) {
        for (const event of batch) {
          // Leaving the loop ends a read-ahead too.
          if (abort.signal.aborted) return;
          const handled = options.handler(event);
          if (handled !== undefined) await handled;
          position = event.position;
        }
        if (batch.length >= options.pageSize) await yieldToEventLoop();
      }
      await options.waitForAppend(seen, abort.signal);
    }
  })();
  done.catch(() => undefined); // observed through `done` by the owner
  return {
    done,
    async stop() {
      abort.abort();
      await done.catch(() => undefined);
    },
  };
}
