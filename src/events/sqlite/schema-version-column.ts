import type Database from "better-sqlite3";

/**
 * Stores made before the `schema_version` column existed get it, empty: their events are read
 * as before (the metadata parsed for its schemaVersion), events appended from now on carry it.
 * Adding a nullable column rewrites nothing, so this is instant whatever the store's size. A row
 * with the column empty (an append by a Shoal of store file version 1, which named its columns) is
 * read by parsing its metadata.
 */
export function addSchemaVersionColumn(db: Database.Database): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('events')").pluck().all() as string[];
  if (!columns.includes("schema_version")) db.exec("ALTER TABLE events ADD COLUMN schema_version INTEGER");
}
