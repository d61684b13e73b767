import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent, StoreSubscription } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";

const ev = (n: number): NewEvent => ({
  id: randomUUID(),
  type: "Thing",
  data: { n, text: "x".repeat(200) },
  metadata: { time: "2026-01-01T00:00:00.000Z", schemaVersion: 1 },
});

/** The store's page: what a catch-up reads at a time. */
const PAGE = 512;

describe("SQLite subscription catching up on one thread", () => {
  let store: SqliteEventStore | undefined;
  let sub: StoreSubscription | undefined;
  afterEach(async () => {
    await sub?.stop();
    await store?.close();
  });

  it("lets the event loop turn after a page is handled before it reads the next one, and at the end waits without reading again", async () => {
    store = new SqliteEventStore(join(tempDir(), "events.db"), { readAheadFrom: Number.POSITIVE_INFINITY });
    const total = 3 * PAGE + 10;
    for (let from = 0; from < total; from += PAGE) {
      const n = Math.min(PAGE, total - from);
      await store.append(
        `s-${from}`,
        Array.from({ length: n }, (_, i) => ev(from + i)),
        "no_stream",
      );
    }
    const s = store;
    const log: string[] = [];
    const readAll = s.readAll.bind(s);
    vi.spyOn(s, "readAll").mockImplementation((options) => {
      log.push(`read after ${options?.after ?? 0}`);
      return readAll(options);
    });
    let handled = 0;
    sub = s.subscribeToAll({ after: 0 }, (e) => {
      handled++;
      // What else is waiting to run (a processor folding the page just handed over) runs here.
      if (e.position % PAGE === 0 || e.position === total) {
        log.push(`handled ${e.position}`);
        setImmediate(() => log.push(`turn after ${e.position}`));
      }
    });
    await vi.waitFor(() => expect(handled).toBe(total), { timeout: 5_000, interval: 5 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual([
      "read after 0",
      "handled 512",
      "turn after 512",
      "read after 512",
      "handled 1024",
      "turn after 1024",
      "read after 1024",
      "handled 1536",
      "turn after 1536",
      "read after 1536",
      "handled 1546",
      "turn after 1546",
    ]);
  });
});
