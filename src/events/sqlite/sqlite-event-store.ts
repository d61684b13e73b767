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
import { addSchemaVersionColumn } from "./schema-version-column.ts";
import { COLUMNS, SqliteRecordedEvent, schemaVersionColumn, type Row } from "./sqlite-recorded-event.ts";

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
  return new SqliteRecordedEvent(row);
}

/** A write waiting for the next group commit, with the caller to settle once it is durable (or not). */
type Pending =
  | {
      readonly kind: "append";
      readonly stream: string;
      readonly events: readonly NewEvent[];
      readonly expected: ExpectedRevision;
      readonly resolve: (result: AppendResult) => void;
      readonly reject: (error: unknown) => void;
    }
  | { readonly kind: "save"; readonly name: string; readonly position: number; readonly resolve: (result: undefined) => void; readonly reject: (error: unknown) => void };

type Outcome = { readonly ok: true; readonly value: AppendResult | undefined } | { readonly ok: false; readonly error: unknown };

/** What one durable commit held: how many appends (callers) and events, and checkpoint saves. */
export interface CommitBatch {
  readonly appends: number;
  readonly events: number;
  readonly saves: number;
}

/** Totals since the store opened, for metrics: commits (fsyncs) against the events they carried. */
export interface CommitStats {
  readonly commits: number;
  readonly appends: number;
  readonly events: number;
  readonly lastBatchAppends: number;
  readonly lastBatchEvents: number;
  readonly largestBatchEvents: number;
}

export interface SqliteEventStoreOptions {
  /**
   * true (the default): writes that arrive in the same turn of the event loop share one durable
   * commit. false: every append and save is its own transaction and fsync, the baseline that
   * bench/store-append.ts measures group commit against.
   */
  readonly groupCommit?: boolean;
}

/**
 * At most this many events per commit: a storm of appends is committed in slices, yielding to
 * the event loop between them, so one commit never holds it for long.
 */
const MAX_BATCH_EVENTS = 4096;

/** A UNIQUE violation: some event id of the append is stored already (the idempotent-retry path). */
function isUniqueViolation(e: unknown): boolean {
  return e instanceof Database.SqliteError && e.code === "SQLITE_CONSTRAINT_UNIQUE";
}

/**
 * The embedded default store: one SQLite file in WAL mode with synchronous=FULL, so an append
 * acknowledged to a caller has been fsynced and survives kill -9 (and power loss).
 *
 * Group commit: appends and checkpoint saves are queued and written together, at the end of the
 * current turn of the event loop (setImmediate), in one IMMEDIATE transaction: one fsync for
 * all of them. Each append is checked against its own expected revision inside it, after the
 * ones queued before it (so two appends to one stream in one batch see each other), and fails
 * alone; every caller is settled only after COMMIT returned. A failure of the store itself (full,
 * read-only, I/O) rolls the whole batch back and rejects every caller in it.
 */
export class SqliteEventStore implements EventStore, CheckpointStore {
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private closed = false;
  private readonly statements: ReturnType<SqliteEventStore["prepareStatements"]>;
  private readonly groupCommit: boolean;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private stats = { commits: 0, appends: 0, events: 0, lastBatchAppends: 0, lastBatchEvents: 0, largestBatchEvents: 0 };
  /** The batch's transaction (BEGIN IMMEDIATE … COMMIT, ROLLBACK on a throw). */
  private readonly commitTransaction: (batch: readonly Pending[], outcomes: Outcome[]) => void;
  /** One multi-event append inside the batch (a SAVEPOINT): all its events or none. */
  private readonly insertAtomically: (stream: string, events: readonly NewEvent[], after: number) => AppendResult;

  constructor(
    readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
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
      addSchemaVersionColumn(db);
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
    this.groupCommit = options.groupCommit ?? true;
    this.commitTransaction = this.db.transaction((batch: readonly Pending[], outcomes: Outcome[]) => {
      for (const op of batch) outcomes.push(this.applyInBatch(op));
    }).immediate;
    this.insertAtomically = this.db.transaction((stream: string, events: readonly NewEvent[], after: number) => this.insert(stream, events, after));
    this.appended.setMaxListeners(0);
  }

  // Prepared once: appends and catch-up reads are the store's hot paths.
  private prepareStatements() {
    return {
      currentRevision: this.db.prepare("SELECT MAX(revision) AS r FROM events WHERE stream = ?").pluck(),
      findEvent: this.db.prepare("SELECT stream, revision, position FROM events WHERE event_id = ?"),
      eventAt: this.db.prepare("SELECT event_id, position FROM events WHERE stream = ? AND revision = ?"),
      insert: this.db.prepare("INSERT INTO events (event_id, stream, revision, type, data, metadata, time, schema_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      readStream: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`).raw(),
      readAll: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw(),
      loadCheckpoint: this.db.prepare("SELECT position FROM checkpoints WHERE name = ?"),
      saveCheckpoint: this.db.prepare(
        "INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position",
      ),
      recordCheck: this.db.prepare("INSERT INTO store_checks (name, at) VALUES ('writable', ?) ON CONFLICT(name) DO UPDATE SET at = excluded.at"),
    };
  }

  /** Commits so far and how full they were (the metrics read this). */
  get commitStats(): CommitStats {
    return { ...this.stats };
  }

  /** Called after every durable commit with what it held; returns the unsubscribe. */
  onCommit(listener: (batch: CommitBatch) => void): () => void {
    this.appended.on("commit", listener);
    return () => this.appended.off("commit", listener);
  }

  private currentRevision(stream: string): number {
    return (this.statements.currentRevision.get(stream) as number | null) ?? -1;
  }

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.assertOpen();
      this.enqueue({ kind: "append", stream, events, expected, resolve, reject });
    });
  }

  private enqueue(op: Pending): void {
    this.queue.push(op);
    if (!this.groupCommit) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushSlice);
    }
  }

  /** One commit of the queue's head; the rest waits for the next turn, so I/O and timers run between. */
  private readonly flushSlice = (): void => {
    this.flushScheduled = false;
    let take = 0;
    let events = 0;
    while (take < this.queue.length && (take === 0 || events < MAX_BATCH_EVENTS)) {
      const op = this.queue[take] as Pending;
      events += op.kind === "append" ? op.events.length : 0;
      take++;
    }
    if (take > 0) this.commit(this.queue.splice(0, take));
    if (this.queue.length > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushSlice);
    }
  };

  /** Everything queued, now (close, and the one-commit-per-write mode). */
  private flush(): void {
    while (this.queue.length > 0) this.commit(this.queue.splice(0, this.groupCommit ? this.queue.length : 1));
  }

  private commit(batch: readonly Pending[]): void {
    const outcomes: Outcome[] = [];
    try {
      this.commitTransaction(batch, outcomes);
    } catch (e) {
      // Rolled back: nothing of this batch is stored, so none of its callers may hear otherwise.
      const failure = storeFailure(e, this.file);
      for (const op of batch) op.reject(failure);
      return;
    }
    let appends = 0;
    let events = 0;
    let saves = 0;
    for (let i = 0; i < batch.length; i++) {
      const op = batch[i] as Pending;
      const outcome = outcomes[i] as Outcome;
      if (!outcome.ok) op.reject(outcome.error);
      else if (op.kind === "append") {
        appends++;
        events += op.events.length;
        op.resolve(outcome.value as AppendResult);
      } else {
        saves++;
        op.resolve(undefined);
      }
    }
    const s = this.stats;
    s.commits++;
    s.appends += appends;
    s.events += events;
    s.lastBatchAppends = appends;
    s.lastBatchEvents = events;
    s.largestBatchEvents = Math.max(s.largestBatchEvents, events);
    const committed: CommitBatch = { appends, events, saves };
    this.appended.emit("commit", committed);
    if (events > 0) this.appended.emit("append");
  }

  /**
   * One queued write, inside the batch's transaction. Its own refusals (wrong expected revision,
   * an id stored elsewhere, data that is not JSON) become its outcome and leave the batch going;
   * a failure of the store itself ends the batch.
   */
  private applyInBatch(op: Pending): Outcome {
    try {
      if (op.kind === "save") {
        this.statements.saveCheckpoint.run(op.name, op.position);
        return { ok: true, value: undefined };
      }
      return { ok: true, value: this.appendInBatch(op.stream, op.events, op.expected) };
    } catch (e) {
      if (!this.db.inTransaction || storeFailure(e, this.file) instanceof StoreUnavailableError) throw e;
      return { ok: false, error: e };
    }
  }

  /**
   * Insert first; only when the revision does not match or an event id is stored already does
   * it look the ids up, to tell a retried append (acknowledged again) from a conflict.
   */
  private appendInBatch(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): AppendResult {
    const actual = this.currentRevision(stream);
    if (revisionMatches(expected, actual)) {
      if (events.length === 0) return { nextExpectedRevision: actual, position: 0 };
      try {
        // A single INSERT that fails undoes itself; several need a savepoint to go together.
        return events.length === 1 ? this.insert(stream, events, actual) : this.insertAtomically(stream, events, actual);
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
    } else if (events.length === 0) throw new WrongExpectedRevisionError({ stream, expected, actual });
    return this.resolveConflict(stream, events, expected, actual);
  }

  private insert(stream: string, events: readonly NewEvent[], after: number): AppendResult {
    const { insert } = this.statements;
    let revision = after;
    let position = 0;
    let now: string | undefined;
    for (const e of events) {
      revision += 1;
      const time = typeof e.metadata.time === "string" ? e.metadata.time : (now ??= new Date().toISOString());
      const info = insert.run(e.id, stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), time, schemaVersionColumn(e.metadata));
      position = Number(info.lastInsertRowid);
    }
    return { nextExpectedRevision: revision, position };
  }

  /**
   * EventStoreDB's idempotence, for SQLite: the same events (by id, in order) already stored
   * where an append with this expected revision put them is that append, acknowledged again.
   * Anything else is a wrong expected revision, or an id stored somewhere else.
   */
  private resolveConflict(stream: string, events: readonly NewEvent[], expected: ExpectedRevision, actual: number): AppendResult {
    const { findEvent, eventAt } = this.statements;
    const first = events[0] as NewEvent;
    const found = findEvent.get(first.id) as { stream: string; revision: number; position: number } | undefined;
    if (found) {
      const start = expected === "no_stream" ? 0 : typeof expected === "number" ? expected + 1 : found.revision;
      let position = found.position;
      let same = found.stream === stream && found.revision === start;
      for (let i = 1; same && i < events.length; i++) {
        const at = eventAt.get(stream, start + i) as { event_id: string; position: number } | undefined;
        same = at?.event_id === (events[i] as NewEvent).id;
        if (at) position = at.position;
      }
      if (same) return { nextExpectedRevision: start + events.length - 1, position };
    }
    if (!revisionMatches(expected, actual)) throw new WrongExpectedRevisionError({ stream, expected, actual });
    for (const e of events) {
      const stored = findEvent.get(e.id) as { stream: string; revision: number } | undefined;
      if (stored) throw new DuplicateEventIdError(`event ${e.id} is already stored in ${stored.stream} at revision ${stored.revision}; event ids are unique`);
    }
    throw new DuplicateEventIdError(`an event id of this append to ${stream} is given twice; event ids are unique`);
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
    const out = new Array<RecordedEvent>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = toRecorded(rows[i] as Row);
    return out;
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

  /** In the same group commit as the appends around it. */
  save(name: string, position: number): Promise<void> {
    return new Promise<undefined>((resolve, reject) => {
      this.assertOpen();
      this.enqueue({ kind: "save", name, position, resolve, reject });
    });
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

  /** Writes still queued are committed first: their callers are waiting for them. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
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
