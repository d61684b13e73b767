import { join } from "node:path";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";

/**
 * What is stored, read from the SQLite file beside a running (or stopped) orchestrator, as an
 * auditor's tool would: each call opens the file, reads and closes it again.
 */
async function read(
  dataDir: string,
  reader: (store: SqliteEventStore) => Promise<RecordedEvent[]>,
): Promise<RecordedEvent[]> {
  const store = new SqliteEventStore(join(dataDir, "shoal.db"));
  try {
    return await reader(store);
  } finally {
    await store.close();
  }
}

/** Every stored event, in store order. */
export const storedEvents = (dataDir: string): Promise<RecordedEvent[]> => read(dataDir, (store) => store.readAll());

/** One stream's stored events (a node's is `node-<NodeID>`), in revision order. */
export const storedStream = (dataDir: string, stream: string): Promise<RecordedEvent[]> =>
  read(dataDir, (store) => store.readStream(stream));
