import type Database from "better-sqlite3";
import { NewerStoreError } from "../store/store-errors.ts";

/**
 * The layout of the store file itself (its tables and columns), in SQLite's `user_version`. A
 * Shoal that changes the layout in a way older ones cannot read raises it; this one refuses a
 * file of a higher version before touching it. Files made before it was kept read 0, the same
 * layout as 1. Version 2 added the actor columns, the filter indexes and the time marks, which
 * every append must keep: a Shoal that knows only version 1 would append without them. Version 3
 * added the hash chain (each event's link, its genesis, the signed checkpoints): a Shoal that knows
 * only version 2 would append events with no link, and break the chain.
 */
export const STORE_FILE_VERSION = 3;
/** The version that added the feed's schema (audit-schema.ts). */
export const FEED_FILE_VERSION = 2;

/**
 * Refuses a store file of a newer layout; the file's version otherwise (the caller raises it once
 * the layout is brought up to this one).
 */
export function checkStoreFileVersion(db: Database.Database, file: string): number {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > STORE_FILE_VERSION) {
    throw new NewerStoreError({
      reason: `${file} is a store file of version ${version}; this Shoal reads store files up to version ${STORE_FILE_VERSION}`,
    });
  }
  return version;
}

/**
 * Only events above version 1 are indexed (the condition is checked on each insert, which costs
 * nothing measurable): looking for events newer than this Shoal reads at start-up is then a walk
 * over the few such events rather than over the whole store.
 */
export function addNewerSchemaIndex(db: Database.Database): void {
  db.exec("CREATE INDEX IF NOT EXISTS events_schema_above_1 ON events (type, schema_version) WHERE schema_version > 1");
}

export interface NewerSchemaEvent {
  readonly position: number;
  readonly stream: string;
  readonly revision: number;
  readonly type: string;
  readonly schemaVersion: number;
  /** The newest version of `type` the caller reads. */
  readonly known: number;
}

/**
 * The first stored event (in store order) whose schema version is above what `known` says the
 * caller reads of its type (types not in `known`: version 1). Events stored before the
 * `schema_version` column existed were all written at version 1 by the Shoals of then.
 */
export function newerSchemaEvent(
  db: Database.Database,
  known: Readonly<Record<string, number>>,
): NewerSchemaEvent | undefined {
  const newest = db
    .prepare("SELECT type, MAX(schema_version) AS version FROM events WHERE schema_version > 1 GROUP BY type")
    .all() as { type: string; version: number }[];
  const first = db.prepare(
    "SELECT position, stream, revision, schema_version AS schemaVersion FROM events WHERE type = ? AND schema_version > 1 AND schema_version > ? ORDER BY position LIMIT 1",
  );
  let found: NewerSchemaEvent | undefined;
  for (const { type, version } of newest) {
    const readable = Object.prototype.hasOwnProperty.call(known, type) ? (known[type] as number) : 1;
    if (version <= readable) continue;
    const row = first.get(type, readable) as Omit<NewerSchemaEvent, "type" | "known">;
    if (found === undefined || row.position < found.position) found = { ...row, type, known: readable };
  }
  return found;
}
