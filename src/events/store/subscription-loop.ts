import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { RecordedEvent, StoreSubscription } from "./event-store.ts";

/**
 * A catch-up subscription built from a paged reader and a "something was appended" signal.
 * Used by adapters whose store has no native subscription (SQLite). A handler that returns
 * nothing is not awaited, and the loop yields to the event loop after every batch: a reader
 * that answers synchronously (SQLite) would otherwise run a whole catch-up in one macrotask,
 * starving timers, NATS and HTTP until it ends.
 */
export function pollingSubscription(options: {
  after: number;
  /**
   * Every event after `after` as the store holds it now, in pages (a catch-up may read ahead: EventStore.readAllPages).
   */
  readPages: (after: number) => AsyncIterable<readonly RecordedEvent[]>;
  /** Resolves when new events may exist (or after a poll interval). */
  waitForAppend: (signal: AbortSignal) => Promise<void>;
  handler: (event: RecordedEvent) => Promise<void> | void;
}): StoreSubscription {
  const abort = new AbortController();
  let position = options.after;
  const done = (async () => {
    while (!abort.signal.aborted) {
      let read = 0;
      for await (const batch of options.readPages(position)) {
        for (const event of batch) {
          // Leaving the loop ends a read-ahead too.
          if (abort.signal.aborted) return;
          const handled = options.handler(event);
          if (handled !== undefined) await handled;
          position = event.position;
        }
        read += batch.length;
        await yieldToEventLoop();
      }
      if (read === 0) await options.waitForAppend(abort.signal);
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
