import { join } from "node:path";
import { expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { eventStoreContract } from "./event-store-contract.ts";

// Each open() is the same file again, as a restart is.
const file = join(tempDir(), "shoal.db");
eventStoreContract("SQLite", async () => new SqliteEventStore(file));

// The mode the append benchmark compares group commit against keeps the same contract.
const single = join(tempDir(), "shoal.db");
eventStoreContract("SQLite, one commit per append", async () => new SqliteEventStore(single, { groupCommit: false }));

// Group commit on a writer thread (EventStore.SQLite.WriterThread=true) keeps it too.
const threaded = join(tempDir(), "shoal.db");
eventStoreContract(
  "SQLite, group commit on a writer thread",
  async () => new SqliteEventStore(threaded, { writerThread: true }),
);

// Replays read ahead on the store's reader thread however short they are (a long replay's path).
const readAhead = join(tempDir(), "shoal.db");
eventStoreContract(
  "SQLite, replays read ahead on a reader thread",
  async () => new SqliteEventStore(readAhead, { readAheadFrom: 0 }),
);

it("SQLite: an empty store's head is 0", async () => {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  try {
    expect(await store.headPosition()).toBe(0);
  } finally {
    await store.close();
  }
});
