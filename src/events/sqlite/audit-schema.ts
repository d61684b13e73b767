import type Database from "better-sqlite3";
import { actorFromJson } from "./actor-columns.ts";
import { MARK_EVERY, MAX_TIME_SKEW, observeTime, type TimeMarkState } from "./time-marks.ts";

/** Where the store logs its one-time upgrade work. */
export interface UpgradeLog {
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * The actor of an event, beside its metadata: plain columns the writer fills from the metadata it
 * appends (actor-columns.ts), so an insert indexes them with no JSON work, and a filtered read
 * finds positions in their indexes alone. Generated columns (computed from the JSON) cost each
 * insert the JSON's parse, and their indexes do not cover a read (SQLite goes to the table row).
 */
const ACTOR_COLUMNS: readonly [string, string][] = [
  ["actor_type", "ALTER TABLE events ADD COLUMN actor_type TEXT"],
  ["actor_id", "ALTER TABLE events ADD COLUMN actor_id TEXT"],
];

/** Rows stored before the columns existed get their actor from their metadata, once. */
const COPY_ACTORS =
  `UPDATE events SET actor_type = ${actorFromJson("metadata", "type")}, ` +
  `actor_id = ${actorFromJson("metadata", "id")} ` +
  "WHERE CASE WHEN json_valid(metadata) THEN json_type(metadata, '$.actor') = 'object' ELSE 0 END";

/**
 * Metadata edited in the file (by hand, or damaged) takes its actor columns along: they say what
 * the text says, as a filter decided in memory reads it. Shoal never updates an event, so this
 * costs its appends nothing.
 */
const ACTOR_FOLLOWS_METADATA = `
CREATE TRIGGER IF NOT EXISTS events_actor_follows_metadata AFTER UPDATE OF metadata ON events BEGIN
  UPDATE events SET
    actor_type = ${actorFromJson("NEW.metadata", "type")},
    actor_id = ${actorFromJson("NEW.metadata", "id")}
  WHERE position = NEW.position;
END;
`;

/**
 * The rows events_by_actor holds: those of an actor with a type and an id, acting on a stream other
 * than its own (`<type>-<id>`: a node's is `node-<id>`). Nodes are many, so their rows scatter over
 * the index, each dirtying a leaf page the commit writes; most are on the node's own stream, which
 * (stream, revision) finds already, and the planner reads that stream for them
 * (sqlite-filtered-read.ts). Rows naming no actor id are read from events_by_actor_type only.
 * A query names this term as it stands here, or SQLite will not use the index.
 */
export const ACTOR_ELSEWHERE = "stream <> actor_type || '-' || actor_id";

/**
 * Each keeps its rows in position order (SQLite appends the rowid), so a filter on types and
 * actors reads the rows it returns and no others, with no sort. Every index costs each append a
 * B-tree insert, so there are as few as the filters allow. A filter on types alone reads
 * (actor_type, type) once per actor type (a handful), rather than an index on type of its own. A
 * stream's rows are found by (stream, revision), and its types checked on them.
 */
const INDEXES = `
CREATE INDEX IF NOT EXISTS events_by_actor_type ON events (actor_type, type);
CREATE INDEX IF NOT EXISTS events_by_actor ON events (actor_type, actor_id, type) WHERE ${ACTOR_ELSEWHERE};
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
    const added = ACTOR_COLUMNS.filter(([name]) => !columns.includes(name));
    for (const [, sql] of added) db.exec(sql);
    const events = upgrading ? (db.prepare("SELECT count(*) FROM events").pluck().get() as number) : 0;
    let started = performance.now();
    if (added.length > 0) {
      // Before the indexes exist: the copy then updates rows only, and each index is built once from them.
      const actors = db.prepare(COPY_ACTORS).run().changes;
      if (events > 0) {
        log?.info(
          { events, actors, ms: Math.round(performance.now() - started) },
          "store upgraded to file version 2: actors copied from metadata",
        );
      }
    }
    db.exec(ACTOR_FOLLOWS_METADATA);
    started = performance.now();
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
