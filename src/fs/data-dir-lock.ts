import { accessSync, constants, mkdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StartupError } from "../errors/startup-error.ts";
import { writeFileAtomic } from "./write-file-atomic.ts";

/** The lock itself; never opened by anything but SQLite (see below). */
export const LOCK_FILE = "shoal.lock";
/** Who holds the lock, for the message a refused process prints. Informational only. */
export const LOCK_OWNER_FILE = "shoal.lock.owner";

export interface LockOwner {
  readonly pid: number;
  readonly command: string;
  readonly host: string;
  readonly since: string;
}

export interface DataDirLock {
  readonly dir: string;
  release(): void;
}

// Strong references: a lock must live exactly as long as the process says it does, never until
// the garbage collector finalises a forgotten connection.
const held = new Set<Database.Database>();

function describeOwner(dir: string): string {
  try {
    const owner = JSON.parse(readFileSync(join(dir, LOCK_OWNER_FILE), "utf8")) as Partial<LockOwner>;
    if (typeof owner.pid === "number") {
      return `${owner.command ?? "another Shoal process"} (pid ${owner.pid} on ${owner.host ?? "?"}, since ${owner.since ?? "?"})`;
    }
  } catch {
    // The holder may not have written it yet; the lock, not this file, is the truth.
  }
  return "another Shoal process";
}

/**
 * Takes the exclusive lock on a DataDir, or refuses with a message naming the holder.
 *
 * Node has no flock(2), so the lock is SQLite's own: an open `BEGIN EXCLUSIVE` transaction on a
 * dedicated file, which SQLite holds as a POSIX fcntl write lock. That is a real kernel lock:
 * - another process (or another connection in this process: SQLite tracks locks per inode and
 *   never lets a close drop a lock another connection holds) gets SQLITE_BUSY at once;
 * - the kernel releases it when the holder exits in any way, kill -9 included, so there is no
 *   stale lock to clean up, unlike a pid file created with O_EXCL;
 * - it works across containers sharing a volume (unlike an abstract socket, which is per
 *   network namespace).
 * The transaction writes nothing (journal in memory), so a killed holder leaves no hot journal.
 * The one rule that keeps it sound: nothing in this process may open and close the lock file
 * through `fs` (POSIX drops a process's locks on any close of the file); only SQLite touches it.
 */
export function lockDataDir(dir: string, command: string): DataDirLock {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new StartupError(
      `DataDir ${dir} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); Shoal keeps its state there`,
    );
  }
  const file = join(dir, LOCK_FILE);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { timeout: 0 });
    db.pragma("journal_mode = MEMORY");
    db.exec("BEGIN EXCLUSIVE");
    // SQLite quietly opens a file it cannot write read-only, and then "takes" the lock without
    // a write lock behind it; a write inside the (never committed) transaction proves it can.
    db.pragma(`user_version = ${process.pid}`);
  } catch (e) {
    db?.close();
    const code = (e as { code?: string }).code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new StartupError(
        `DataDir ${dir} is in use by ${describeOwner(dir)}; stop it, or give this process another DataDir`,
      );
    }
    if (
      code?.startsWith("SQLITE_READONLY") ||
      code?.startsWith("SQLITE_CANTOPEN") ||
      code?.startsWith("SQLITE_IOERR")
    ) {
      throw new StartupError(`DataDir ${dir} cannot be written: ${(e as Error).message} (${code})`);
    }
    throw new StartupError(`cannot lock DataDir ${dir}: ${(e as Error).message}`);
  }
  held.add(db);
  const owner: LockOwner = { pid: process.pid, command, host: hostname(), since: new Date().toISOString() };
  try {
    writeFileAtomic(join(dir, LOCK_OWNER_FILE), `${JSON.stringify(owner)}\n`);
  } catch (e) {
    release(db, dir);
    throw new StartupError(`DataDir ${dir} cannot be written: ${(e as Error).message}`);
  }
  const lockDb = db;
  let released = false;
  return {
    dir,
    release() {
      if (released) return;
      released = true;
      release(lockDb, dir);
    },
  };
}

function release(db: Database.Database, dir: string): void {
  // The owner file goes first: once the lock is free, a stale file could name the wrong holder.
  try {
    rmSync(join(dir, LOCK_OWNER_FILE), { force: true });
  } catch {
    // A DataDir that went read-only keeps the file; the next holder overwrites it.
  }
  try {
    db.exec("ROLLBACK");
  } finally {
    db.close();
    held.delete(db);
  }
}
