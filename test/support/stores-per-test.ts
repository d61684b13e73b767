import { join } from "node:path";
import { afterEach } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { tempDir } from "./fixtures.ts";

/**
 * Opens SQLite event stores for the tests of the suite that calls this (at its top level or in a describe block): the
 * store of `dataDir`, else of a fresh DataDir named after `dataDirPrefix`, closed after the test that opened it. A test
 * that hands the file to an orchestrator closes it first; closing it again is harmless.
 */
export function storesPerTest(dataDirPrefix: string): (dataDir?: string) => SqliteEventStore {
  const opened: SqliteEventStore[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  return (dataDir = tempDir(dataDirPrefix)) => {
    const store = new SqliteEventStore(join(dataDir, "shoal.db"));
    opened.push(store);
    return store;
  };
}
