import { EventEmitter } from "node:events";
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, rmSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type {
  AppendResult,
  CheckpointStore,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StoreSubscription,
} from "../store/event-store.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../store/store-errors.ts";
import { pollingSubscription } from "../store/subscription-loop.ts";

interface Row {
  position: number;
  event_id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  time: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  stream   TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type     TEXT NOT NULL,
  data     TEXT NOT NULL,
  metadata TEXT NOT NULL,
  time     TEXT NOT NULL,
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
`;

// Catch-up subscribers are woken by appends in this process; the poll covers any other writer.
const POLL_MS = 1000;
const BATCH = 512;
/** Below this much free space the store refuses to start: it would fail its first writes. */
export const MIN_FREE_BYTES = 16 * 1024 * 1024;

/**
 * SQLite's failures that come from the machine (disk, filesystem, another process) become the
 * port's StoreUnavailableError; anything else (constraints, corruption, bugs) stays an error of
 * its own, which callers report as Internal.
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
function readOnlyCause(file: string, code: string): string | undefined {
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

function storeFailure(e: unknown, file: string): unknown {
  if (e instanceof Database.SqliteError) {
    const reason = environmentReason(e.code);
    if (reason !== undefined) return new StoreUnavailableError({ reason: `${readOnlyCause(file, e.code) ?? reason} (${e.code}: ${e.message})` });
  }
  return e;
}

/** An append's event id is already stored somewhere this append could not have put it. */
export class DuplicateEventIdError extends Error {
  override readonly name = "DuplicateEventIdError";
}

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    stream: row.stream,
    revision: row.revision,
    position: row.position,
    time: row.time,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  };
}

/**
 * The embedded default store: one SQLite file in WAL mode with synchronous=FULL, so an append
 * acknowledged to a caller has been fsynced and survives kill -9 (and power loss).
 */
export class SqliteEventStore implements EventStore, CheckpointStore {
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private closed = false;
  private readonly statements: ReturnType<SqliteEventStore["prepareStatements"]>;

  constructor(readonly file: string) {
    let db: Database.Database | undefined;
    try {
      mkdirSync(dirname(file), { recursive: true });
      // SQLite would open a file it cannot write read-only, creating -wal and -shm beside it.
      const readOnly = existsSync(file) ? readOnlyCause(file, "SQLITE_CANTOPEN") : undefined;
      if (readOnly !== undefined) throw new StoreUnavailableError({ reason: `cannot open SQLite store ${file}: ${readOnly}` });
      db = new Database(file);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma("busy_timeout = 5000");
      db.exec(SCHEMA);
      this.db = db;
      this.statements = this.prepareStatements();
    } catch (e) {
      // A half-opened store must not keep the file open (and its filesystem busy).
      db?.close();
      if (e instanceof StoreUnavailableError) throw e;
      const failure = storeFailure(e, file);
      const why = failure instanceof StoreUnavailableError ? failure.reason : (e as Error).message;
      throw new StoreUnavailableError({ reason: `cannot open SQLite store ${file}: ${why}` });
    }
    this.appended.setMaxListeners(0);
  }

  // Prepared once: appends and catch-up reads are the store's hot paths.
  private prepareStatements() {
    return {
      currentRevision: this.db.prepare("SELECT MAX(revision) AS r FROM events WHERE stream = ?"),
      findEvent: this.db.prepare("SELECT stream, revision, position FROM events WHERE event_id = ?"),
      eventAt: this.db.prepare("SELECT event_id, position FROM events WHERE stream = ? AND revision = ?"),
      insert: this.db.prepare("INSERT INTO events (event_id, stream, revision, type, data, metadata, time) VALUES (?, ?, ?, ?, ?, ?, ?)"),
      readStream: this.db.prepare("SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?"),
      readAll: this.db.prepare("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?"),
      loadCheckpoint: this.db.prepare("SELECT position FROM checkpoints WHERE name = ?"),
      saveCheckpoint: this.db.prepare(
        "INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position",
      ),
      recordCheck: this.db.prepare("INSERT INTO store_checks (name, at) VALUES ('writable', ?) ON CONFLICT(name) DO UPDATE SET at = excluded.at"),
    };
  }

  private currentRevision(stream: string): number {
    const row = this.statements.currentRevision.get(stream) as { r: number | null };
    return row.r ?? -1;
  }

  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    const { insert } = this.statements;
    let stored = false;
    const run = this.db.transaction((): AppendResult => {
      const actual = this.currentRevision(stream);
      const replay = events.length === 0 ? undefined : this.alreadyStored(stream, events, expected, actual);
      if (replay) return replay;
      if (!revisionMatches(expected, actual)) throw new WrongExpectedRevisionError({ stream, expected, actual });
      let revision = actual;
      let position = 0;
      for (const e of events) {
        revision += 1;
        const time = typeof e.metadata.time === "string" ? e.metadata.time : new Date().toISOString();
        const info = insert.run(e.id, stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), time);
        position = Number(info.lastInsertRowid);
      }
      stored = events.length > 0;
      return { nextExpectedRevision: revision, position };
    });
    const result = this.guarded(() => run.immediate());
    if (stored) this.appended.emit("append");
    return result;
  }

  /**
   * EventStoreDB's idempotence, for SQLite: the same events (by id, in order) already stored
   * where an append with this expected revision put them is that append, acknowledged again.
   */
  private alreadyStored(stream: string, events: readonly NewEvent[], expected: ExpectedRevision, actual: number): AppendResult | undefined {
    const first = events[0] as NewEvent;
    const found = this.statements.findEvent.get(first.id) as { stream: string; revision: number; position: number } | undefined;
    if (!found) return undefined;
    const start = expected === "no_stream" ? 0 : typeof expected === "number" ? expected + 1 : found.revision;
    let position = found.position;
    let same = found.stream === stream && found.revision === start;
    for (let i = 1; same && i < events.length; i++) {
      const at = this.statements.eventAt.get(stream, start + i) as { event_id: string; position: number } | undefined;
      same = at?.event_id === (events[i] as NewEvent).id;
      if (at) position = at.position;
    }
    if (same) return { nextExpectedRevision: start + events.length - 1, position };
    if (!revisionMatches(expected, actual)) throw new WrongExpectedRevisionError({ stream, expected, actual });
    throw new DuplicateEventIdError(`event ${first.id} is already stored in ${found.stream} at revision ${found.revision}; event ids are unique`);
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const rows = this.guarded(() => this.statements.readStream.all(stream, options.fromRevision ?? 0, options.maxCount ?? -1) as Row[]);
    return rows.map(toRecorded);
  }

  /** Checkpoints live in their own table, so they are never among these. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const rows = this.guarded(() => this.statements.readAll.all(options.after ?? 0, options.maxCount ?? -1) as Row[]);
    return rows.map(toRecorded);
  }

  subscribeToAll(options: { readonly after?: number }, handler: (event: RecordedEvent) => Promise<void> | void): StoreSubscription {
    return pollingSubscription({
      after: options.after ?? 0,
      readBatch: (after) => this.readAll({ after, maxCount: BATCH }),
      waitForAppend: (signal) =>
        new Promise<void>((resolve) => {
          const finish = () => {
            clearTimeout(timer);
            this.appended.off("append", finish);
            signal.removeEventListener("abort", finish);
            resolve();
          };
          const timer = setTimeout(finish, POLL_MS);
          this.appended.once("append", finish);
          signal.addEventListener("abort", finish);
        }),
      handler,
    });
  }

  async load(name: string): Promise<number | undefined> {
    this.assertOpen();
    const row = this.guarded(() => this.statements.loadCheckpoint.get(name) as { position: number } | undefined);
    return row?.position;
  }

  async save(name: string, position: number): Promise<void> {
    this.assertOpen();
    this.guarded(() => this.statements.saveCheckpoint.run(name, position));
  }

  /**
   * A real write (fsynced like an append) to a bookkeeping table, and enough free space on the
   * file's filesystem: a read-only file, directory or filesystem, or a full disk, is refused
   * here rather than on the first command.
   */
  async checkWritable(): Promise<void> {
    this.assertOpen();
    this.guarded(() => this.statements.recordCheck.run(new Date().toISOString()));
    let free: number;
    try {
      const fs = statfsSync(dirname(this.file));
      free = fs.bavail * fs.bsize;
    } catch (e) {
      throw new StoreUnavailableError({ reason: `cannot tell how much space is free for ${this.file}: ${(e as Error).message}` });
    }
    if (free < MIN_FREE_BYTES) {
      throw new StoreUnavailableError({
        reason: `the disk holding ${this.file} is (nearly) full: ${Math.floor(free / 1024)} KiB free, at least ${MIN_FREE_BYTES / 1024 / 1024} MiB needed`,
      });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.appended.emit("append");
    this.db.close();
  }

  private guarded<A>(f: () => A): A {
    try {
      return f();
    } catch (e) {
      throw storeFailure(e, this.file);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError({ reason: `SQLite store ${this.file} is closed` });
  }
}

function revisionMatches(expected: ExpectedRevision, actual: number): boolean {
  return (
    expected === "any" ||
    (expected === "no_stream" && actual === -1) ||
    (expected === "stream_exists" && actual !== -1) ||
    expected === actual
  );
}
