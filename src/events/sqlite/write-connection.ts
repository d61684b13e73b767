import Database from "better-sqlite3";

/**
 * A connection for the store's writes: WAL, and synchronous=FULL so that a commit has been
 * fsynced when it returns (an acknowledged append survives kill -9 and power loss).
 */
export function openWriteConnection(file: string): Database.Database {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("busy_timeout = 5000");
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}
