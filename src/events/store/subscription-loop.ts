import type { RecordedEvent, StoreSubscription } from "./event-store.ts";

/**
 * A catch-up subscription built from a batch reader and a "something was appended" signal.
 * Used by adapters whose store has no native subscription (SQLite).
 */
export function pollingSubscription(options: {
  after: number;
  readBatch: (after: number) => Promise<RecordedEvent[]>;
  /** Resolves when new events may exist (or after a poll interval). */
  waitForAppend: (signal: AbortSignal) => Promise<void>;
  handler: (event: RecordedEvent) => Promise<void> | void;
}): StoreSubscription {
  const abort = new AbortController();
  let position = options.after;
  const done = (async () => {
    while (!abort.signal.aborted) {
      const batch = await options.readBatch(position);
      for (const event of batch) {
        if (abort.signal.aborted) return;
        await options.handler(event);
        position = event.position;
      }
      if (batch.length === 0) await options.waitForAppend(abort.signal);
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
