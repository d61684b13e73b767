import type Database from "better-sqlite3";
import { MARK_EVERY, MAX_TIME_SKEW, observeTime, type TimeMarkState } from "./time-marks.ts";

/** Where the store logs its one-time upgrade work. */
export interface UpgradeLog {
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * The actor of an event, read from its metadata. Virtual: computed when read or indexed, so old
 * rows are covered without being rewritten. A row whose metadata is not JSON has no actor rather
 * than failing every index build and insert (the store would not open).
 */
const ACTOR_COLUMNS: readonly [string, string][] = [
  [
    "actor_type",
    "ALTER TABLE events ADD COLUMN actor_type TEXT GENERATED ALWAYS AS " +
      "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.actor.type') END) VIRTUAL",
  ],
  [
    "actor_id",
    "ALTER TABLE events ADD COLUMN actor_id TEXT GENERATED ALWAYS AS " +
      "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.actor.id') END) VIRTUAL",
  ],
];

/**
 * Each keeps its rows in position order (SQLite appends the rowid), so a filter on types and
 * actors reads the rows it returns and no others, with no sort. A stream's rows are found by
 * (stream, revision), and its types checked on them: an index on (stream, type) as well cost ≈ 14 %
 * of an insert's CPU, to spare reading the rest of a stream, short but for a pathological one.
 */
const INDEXES = `
CREATE INDEX IF NOT EXISTS events_by_type ON events (type);
CREATE INDEX IF NOT EXISTS events_by_actor_type ON events (actor_type, type);
CREATE INDEX IF NOT EXISTS events_by_actor ON events (actor_type, actor_id, type);
`;

const TABLES = `
CREATE TABLE IF NOT EXISTS time_marks (
  position    INTEGER PRIMARY KEY,
  max_time_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS time_marks_by_max ON time_marks (max_time_ms);
CREATE TABLE IF NOT EXISTS store_meta (
  name  TEXT PRIMARY KEY,
  value
);
`;

/**
 * The feed's schema (store file version 2), added to a store of any earlier version: actor
 * columns, the filter indexes, the time marks and the largest skew. Everything is additive, and
 * done in one transaction with the version bump, so a store interrupted while upgrading is
 * upgraded again, whole, on the next open. Marks missing after the newest one (an upgraded
 * store: all of them) are written here, from the stored times.
 */
export function addAuditSchema(
  db: Database.Database,
  upgradeToVersion: number,
  upgrading: boolean,
  log: UpgradeLog | undefined,
): void {
  db.transaction(() => {
    const columns = db.prepare("SELECT name FROM pragma_table_xinfo('events')").pluck().all() as string[];
    for (const [name, sql] of ACTOR_COLUMNS) if (!columns.includes(name)) db.exec(sql);
    const events = upgrading ? (db.prepare("SELECT count(*) FROM events").pluck().get() as number) : 0;
    let started = performance.now();
    db.exec(INDEXES);
    db.exec(TABLES);
    if (events > 0) {
      log?.info(
        { events, ms: Math.round(performance.now() - started) },
        "store upgraded to file version 2: filter indexes built",
      );
    }
    started = performance.now();
    const marked = catchUpTimeMarks(db);
    if (events > 0) {
      log?.info(
        { events: marked.events, marks: marked.marks, ms: Math.round(performance.now() - started) },
        "store upgraded to file version 2: time marks written",
      );
    }
    if (upgrading) db.pragma(`user_version = ${upgradeToVersion}`);
  }).immediate();
}

/**
 * The marks' state at the store's head: the newest mark, then every event after it. A store
 * kept by this writer has fewer than MARK_EVERY events after its newest mark.
 */
export function loadTimeMarkState(db: Database.Database): { state: TimeMarkState; events: number } {
  const last = db.prepare("SELECT position, max_time_ms FROM time_marks ORDER BY position DESC LIMIT 1").get() as
    { position: number; max_time_ms: number } | undefined;
  const skew = db.prepare("SELECT value FROM store_meta WHERE name = ?").pluck().get(MAX_TIME_SKEW) as
    number | undefined;
  const state: TimeMarkState = {
    max: last?.max_time_ms ?? -Infinity,
    block: last === undefined ? -1 : Math.floor(last.position / MARK_EVERY),
    skew: skew ?? 0,
    storedSkew: skew ?? 0,
    pending: [],
  };
  let events = 0;
  const tail = db.prepare("SELECT position, time FROM events WHERE position > ? ORDER BY position").raw();
  for (const row of tail.iterate(last?.position ?? 0) as Iterable<[number, string]>) {
    observeTime(state, row[0], row[1]);
    events++;
  }
  return { state, events };
}

/** Statements the writer keeps the marks with, in its own transaction. */
export function prepareTimeMarkWrites(db: Database.Database) {
  const mark = db.prepare("INSERT OR REPLACE INTO time_marks (position, max_time_ms) VALUES (?, ?)");
  const skew = db.prepare(
    "INSERT INTO store_meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
  );
  /** Writes what the state has pending (inside the caller's transaction). */
  return (state: TimeMarkState): void => {
    const { pending } = state;
    for (let i = 0; i < pending.length; i += 2) mark.run(pending[i], pending[i + 1]);
    pending.length = 0;
    if (state.skew !== state.storedSkew) {
      skew.run(MAX_TIME_SKEW, state.skew);
      state.storedSkew = state.skew;
    }
  };
}

/** Writes the marks (and skew) missing after the newest mark: nothing, or a few, for a store this writer kept. */
function catchUpTimeMarks(db: Database.Database): { events: number; marks: number } {
  const { state, events } = loadTimeMarkState(db);
  const marks = state.pending.length / 2;
  prepareTimeMarkWrites(db)(state);
  return { events, marks };
}
