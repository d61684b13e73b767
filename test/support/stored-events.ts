import { expect } from "vitest";
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

const pause = () => new Promise((r) => setTimeout(r, 20));
const newestPosition = async (dataDir: string) => (await storedEvents(dataDir)).at(-1)?.position ?? 0;

/**
 * A moment between two acts: its time, and the newest stored position then. Taken once nothing has been stored for a
 * while (what an act sets off, a stop's say, has settled), and nothing may be stored around it.
 */
export async function quietMoment(dataDir: string): Promise<{ time: string; position: number }> {
  let position = await newestPosition(dataDir);
  for (let settled = 0; settled < 5;) {
    await pause();
    const now = await newestPosition(dataDir);
    settled = now === position ? settled + 1 : 0;
    position = now;
  }
  await pause();
  const time = new Date().toISOString();
  await pause();
  expect(await newestPosition(dataDir)).toBe(position);
  return { time, position };
}
