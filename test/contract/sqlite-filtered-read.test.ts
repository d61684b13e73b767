import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventFilter, NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { tempDir } from "../support/fixtures.ts";
import {
  appendLog,
  filtersFor,
  LOG_START_MS,
  naiveMatch,
  readAllFilteredPages,
  skewedLog,
  type LogEvent,
} from "../support/skewed-log.ts";
import { timeMarksOf } from "../support/time-marks-check.ts";

/** A store file of version 1, as the Shoal before the feed made it (its schema SQL, frozen here). */
const VERSION_1_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  stream   TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type     TEXT NOT NULL,
  data     TEXT NOT NULL,
  metadata TEXT NOT NULL,
  time     TEXT NOT NULL,
  schema_version INTEGER,
  UNIQUE (stream, revision)
);
CREATE TABLE IF NOT EXISTS checkpoints (
  name     TEXT PRIMARY KEY,
  position INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS store_checks (
  name TEXT PRIMARY KEY,
  at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_schema_above_1 ON events (type, schema_version) WHERE schema_version > 1;
PRAGMA user_version = 1;
`;

/** Writes the log into a version 1 file as that Shoal's writer did; `damaged` rows get metadata that is not JSON. */
function version1File(file: string, log: readonly LogEvent[], damaged: ReadonlySet<number>): void {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.exec(VERSION_1_SCHEMA);
    const insert = db.prepare(
      "INSERT INTO events (event_id, stream, revision, type, data, metadata, time) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const revisions = new Map<string, number>();
    db.transaction(() => {
      log.forEach(({ stream, event }, i) => {
        const revision = (revisions.get(stream) ?? -1) + 1;
        revisions.set(stream, revision);
        const metadata = damaged.has(i)
          ? '{"actor": {"type": "operator", "id": "alice"'
          : JSON.stringify(event.metadata);
        const time = event.metadata.time as string;
        insert.run(event.id, stream, revision, event.type, JSON.stringify(event.data), metadata, time);
      });
    })();
  } finally {
    db.close();
  }
}

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
function open(file: string, options: ConstructorParameters<typeof SqliteEventStore>[1] = {}): SqliteEventStore {
  const store = new SqliteEventStore(file, options);
  opened.push(store);
  return store;
}

/** Every filter over the whole store equals readAll filtered in memory (metadata that is not JSON names no actor). */
async function expectFiltersAnswer(store: SqliteEventStore, filters: readonly EventFilter[]): Promise<void> {
  const all = await store.readAll();
  const through = await store.headPosition();
  for (const filter of filters) {
    const expected = all.filter((e) => naiveMatch(e, filter)).map((e) => e.id);
    const { events } = await readAllFilteredPages(store, filter, { through, limit: 9 });
    expect(
      events.map((e) => e.id),
      JSON.stringify(filter),
    ).toEqual(expected);
  }
}

function version(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
}

describe("SQLite store file version 2", () => {
  it("upgrades a version 1 file once, logging the index build and the marks with counts and ms, and answers every filter as readAll does", async () => {
    const file = join(tempDir(), "shoal.db");
    const log = skewedLog("up", 1500, 3);
    const damaged = new Set([10, 700, 1499]);
    version1File(file, log, damaged);
    const { logger, messages } = capturedLogger();

    const store = open(file, { logger });
    expect(version(file)).toBe(3);
    const [copied] = messages("actors copied from metadata");
    const withActor = log.filter((l, i) => !damaged.has(i) && l.event.metadata.actor !== undefined).length;
    expect(copied).toMatchObject({ events: 1500, actors: withActor, ms: expect.any(Number) });
    const [built] = messages("filter indexes built");
    expect(built).toMatchObject({ events: 1500, ms: expect.any(Number) });
    const [marked] = messages("time marks written");
    expect(marked).toMatchObject({ events: 1500, marks: 6, ms: expect.any(Number) });
    expect(timeMarksOf(file).stored).toEqual(timeMarksOf(file).expected);

    const filters = filtersFor("up", log);
    await expectFiltersAnswer(store, filters);
    // The damaged rows are skipped by no filter that does not ask for an actor.
    const byType = await store.readFiltered({ types: [log[700]!.event.type] }, { maxCount: 10_000 });
    expect(byType.events.map((e) => e.id)).toContain(log[700]!.event.id);

    // Appends after the upgrade keep the marks, and a second open upgrades nothing.
    await appendLog(store, skewedLog("up", 300, 4));
    await store.close();
    const again = capturedLogger();
    const reopened = open(file, { logger: again.logger });
    expect(again.messages("store upgraded")).toEqual([]);
    expect(timeMarksOf(file).stored).toEqual(timeMarksOf(file).expected);
    await expectFiltersAnswer(reopened, filters.slice(0, 12));
  }, 120_000);

  it("opens a store with rows whose metadata is not JSON, and only a filter on the actor leaves them out", async () => {
    const file = join(tempDir(), "shoal.db");
    const log = skewedLog("dm", 600, 5);
    await appendLog(open(file), log);
    await opened.pop()!.close();
    const db = new Database(file);
    db.prepare("UPDATE events SET metadata = 'not json' WHERE position IN (5, 300, 600)").run();
    db.close();

    const store = open(file);
    const damaged = (await store.readAll()).filter((e) => [5, 300, 600].includes(e.position));
    await expectFiltersAnswer(store, filtersFor("dm", log));
    for (const e of damaged) {
      const filter = { types: [e.type], streams: [e.stream] };
      const { events } = await store.readFiltered(filter, { maxCount: 1000 });
      expect(events.map((x) => x.position)).toContain(e.position);
      const byActor = await store.readFiltered(
        { ...filter, actors: [{ type: "node" }, { type: "workflow" }] },
        {
          maxCount: 1000,
        },
      );
      expect(byActor.events.map((x) => x.position)).not.toContain(e.position);
    }
    // Appending still works beside them.
    await store.append("node-dm-after", [{ id: randomUUID(), type: "NodeApproved", data: {}, metadata: {} }], "any");
  });

  it("refuses a file of a newer version, naming it", async () => {
    const file = join(tempDir(), "shoal.db");
    open(file);
    await opened.pop()!.close();
    const db = new Database(file);
    db.pragma("user_version = 4");
    db.close();
    expect(() => new SqliteEventStore(file)).toThrow(
      /is a store file of version 4; this Shoal reads store files up to version 3/,
    );
  });
});

const at = (ms: number): NewEvent => ({
  id: randomUUID(),
  type: "NodeApproved",
  data: {},
  metadata: { time: new Date(ms).toISOString() },
});
const FAR_FUTURE = LOG_START_MS + 10 * 365 * 86_400_000;

describe.each([
  ["on the event loop", false],
  ["on a writer thread", true],
])("SQLite time marks with commits %s", (_, writerThread) => {
  it("leaves the marks and the skew as they were when a batch is rolled back", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    await store.append(
      "node-a",
      Array.from({ length: 250 }, (_, i) => at(LOG_START_MS + i * 1000)),
      "no_stream",
    );
    const db = new Database(file);
    // The marks' own write fails: the batch (positions 251..260, across a mark) rolls back whole.
    db.exec("CREATE TRIGGER no_marks BEFORE INSERT ON time_marks BEGIN SELECT RAISE(ABORT, 'no marks'); END");
    const early = Array.from({ length: 10 }, (_, i) => at(i % 2 === 0 ? FAR_FUTURE : LOG_START_MS - 3_600_000));
    await expect(store.append("node-b", early, "no_stream")).rejects.toThrow(/no marks/);
    db.exec("DROP TRIGGER no_marks");
    db.close();
    expect(await store.readStream("node-b")).toEqual([]);

    await store.append(
      "node-a",
      Array.from({ length: 20 }, (_, i) => at(LOG_START_MS + (250 + i) * 1000)),
      249,
    );
    const marks = timeMarksOf(file);
    expect(marks.stored).toEqual(marks.expected);
    expect(marks.stored.marks.map(([p]) => p)).toEqual([1, 256]);
    expect(marks.stored.skew).toBe(0);
  });

  it("leaves out of the marks an append whose savepoint failed, and keeps the others of its batch", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    await store.append(
      "node-a",
      Array.from({ length: 505 }, (_, i) => at(LOG_START_MS + i * 1000)),
      "no_stream",
    );
    const db = new Database(file);
    db.exec(
      "CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.type = 'Poison' BEGIN SELECT RAISE(ABORT, 'poison'); END",
    );
    // In one tick: an append failing in its savepoint after a far-future and a late event, and one across a mark.
    const settled = await Promise.allSettled([
      store.append("node-b", [at(FAR_FUTURE), at(LOG_START_MS - 3_600_000), { ...at(0), type: "Poison" }], "no_stream"),
      store.append(
        "node-c",
        Array.from({ length: 20 }, (_, i) => at(LOG_START_MS + (505 + i) * 1000)),
        "no_stream",
      ),
    ]);
    db.close();
    expect(settled.map((s) => s.status)).toEqual(["rejected", "fulfilled"]);
    expect(await store.readStream("node-b")).toEqual([]);
    const marks = timeMarksOf(file);
    expect(marks.stored).toEqual(marks.expected);
    expect(marks.stored.marks.map(([p]) => p)).toEqual([1, 256, 512]);
    expect(marks.stored.skew).toBe(0);
    const window = await store.readFiltered({ until: LOG_START_MS + 100_000 }, { maxCount: 1000 });
    expect(window.events.map((e: RecordedEvent) => e.position)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
  });
});
