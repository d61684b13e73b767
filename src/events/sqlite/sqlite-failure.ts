import { accessSync, closeSync, constants, existsSync, openSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";

/**
 * SQLite's failures that come from the machine (disk, filesystem, another process) make the
 * store unavailable; anything else (constraints, corruption, bugs) stays an error of its own,
 * which callers report as Internal. Plain strings, so the writer thread can say it too.
 */
function environmentReason(code: string): string | undefined {
  if (code === "SQLITE_FULL") return "the disk is full";
  if (code.startsWith("SQLITE_READONLY")) return "it is read-only (the file, its directory or its filesystem)";
  if (code.startsWith("SQLITE_IOERR")) return "an I/O error";
  if (code.startsWith("SQLITE_CANTOPEN")) return "it cannot be opened";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "it is locked by another process";
  if (code === "SQLITE_PERM" || code === "SQLITE_AUTH") return "permission denied";
  if (code === "SQLITE_NOMEM") return "out of memory";
  return undefined;
}

/**
 * SQLite reports a filesystem that went read-only under it as an I/O error, and a read-only one
 * at open as "cannot open"; asking the filesystem tells the operator what is really wrong.
 * ext4's errors=remount-ro marks itself read-only without the mount flag access(2) looks at,
 * so after an I/O error a real write next to the store settles it.
 */
export function readOnlyCause(file: string, code: string): string | undefined {
  const dir = dirname(file);
  const cause = (e: unknown, path: string): string | undefined => {
    const errno = (e as NodeJS.ErrnoException).code;
    if (errno === "EROFS") return `it is read-only (the filesystem holding ${path} is read-only)`;
    if (errno === "EACCES" || errno === "EPERM") return `it is read-only (${path} cannot be written by this process)`;
    return undefined;
  };
  for (const path of [dir, file]) {
    try {
      if (existsSync(path)) accessSync(path, constants.W_OK);
    } catch (e) {
      const found = cause(e, path);
      if (found) return found;
    }
  }
  if (!code.startsWith("SQLITE_IOERR")) return undefined;
  const probe = join(dir, `.shoal-write-probe-${process.pid}`);
  try {
    closeSync(openSync(probe, "w"));
    rmSync(probe, { force: true });
  } catch (e) {
    return cause(e, dir);
  }
  return undefined;
}

/** Why the store is unavailable, when `e` is a failure of the machine under it; else undefined. */
export function unavailableReason(e: unknown, file: string): string | undefined {
  if (!(e instanceof Database.SqliteError)) return undefined;
  const reason = environmentReason(e.code);
  return reason === undefined ? undefined : `${readOnlyCause(file, e.code) ?? reason} (${e.code}: ${e.message})`;
}
