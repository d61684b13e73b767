import { EventEmitter } from "node:events";
import { existsSync, mkdirSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import type {
  AppendResult,
  CheckpointStore,
  EventFilter,
  EventStore,
  ExpectedRevision,
  FilteredPage,
  NewEvent,
  PositionBounds,
  ReadAllOptions,
  ReadFilteredOptions,
  ReadAllPagesOptions,
  ReadStreamOptions,
  RecordedEvent,
  StoreSubscription,
} from "../store/event-store.ts";
import { NewerStoreError, StoreUnavailableError } from "../store/store-errors.ts";
import { readAllPagesInline } from "../store/read-all-pages.ts";
import { pollingSubscription } from "../store/subscription-loop.ts";
import { actorColumns } from "./actor-columns.ts";
import { addAuditSchema, type UpgradeLog } from "./audit-schema.ts";
import type { AuditLog } from "../chain/audit-log.ts";
import { addChainSchema } from "./chain-schema.ts";
import { SqliteAuditLog } from "./sqlite-audit-log.ts";
import {
  addNewerSchemaIndex,
  checkStoreFileVersion,
  FEED_FILE_VERSION,
  newerSchemaEvent,
  STORE_FILE_VERSION,
} from "./newer-schema.ts";
import { addSchemaVersionColumn } from "./schema-version-column.ts";
import {
  OP_APPEND,
  OP_CHECK,
  OP_SAVE,
  SqliteBatchWriter,
  type BatchResult,
  type EncodedBatch,
  type WriteFailure,
} from "./sqlite-batch-writer.ts";
import { CommittedTail } from "./committed-tail.ts";
import { readOnlyCause, unavailableReason } from "./sqlite-failure.ts";
import { DuplicateEventIdError, toError } from "./write-failure-error.ts";
import { COLUMNS, SqliteRecordedEvent, schemaVersionColumn, type Row } from "./sqlite-recorded-event.ts";
import { readAheadPages } from "./sqlite-reader-thread.ts";
import { SqliteFilteredReader } from "./sqlite-filtered-read.ts";
import { SqliteWriterThread } from "./sqlite-writer-thread.ts";
import { openWriteConnection } from "./write-connection.ts";

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

export { DuplicateEventIdError };
/** Below this much free space the store refuses to start: it would fail its first writes. */
export const MIN_FREE_BYTES = 16 * 1024 * 1024;

function storeFailure(e: unknown, file: string): unknown {
  const reason = unavailableReason(e, file);
  return reason === undefined ? e : new StoreUnavailableError({ reason });
}

function toRecorded(row: Row): RecordedEvent {
  return SqliteRecordedEvent.fromRow(row);
}

/** A write waiting for its group commit, encoded, with the caller to settle once it is durable (or not). */
interface Pending {
  readonly kind: typeof OP_APPEND | typeof OP_SAVE | typeof OP_CHECK;
  readonly encoded: EncodedBatch;
  readonly events: number;
  readonly resolve: (result: AppendResult | undefined) => void;
  readonly reject: (error: unknown) => void;
}

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
   * commit. false: every append and save is its own transaction and fsync, on the event loop,
   * the baseline that bench/store-append.ts measures group commit against.
   */
  readonly groupCommit?: boolean;
  /**
   * true: group commits run on a worker thread that owns the write connection, so SQLite's CPU
   * and the fsync's wait are off the event loop and the next batch is decided while one commits.
   * false (the default, EventStore.SQLite.WriterThread): they run on the event loop; on a machine
   * with no free core that costs less CPU per event (docs/performance.md, round 6).
   */
  readonly writerThread?: boolean;
  /**
   * A replay (readAllPages) of at least this many events, by the store's head, reads ahead on a
   * reader thread of its own (default READ_AHEAD_FROM; Infinity: never, every page read on the
   * caller's thread). Shorter ones are not worth starting a thread for. The orchestrator passes
   * Infinity when EventStore.SQLite.ReadAhead is false.
   */
  readonly readAheadFrom?: number;
  /** Where the one-time work of upgrading an older store file (index builds, time marks) is logged. */
  readonly logger?: UpgradeLog;
}

/** Replays shorter than this read on the caller's thread (a thread costs ≈ 20–50 ms to start, more from sources). */
export const READ_AHEAD_FROM = 50_000;
/**
 * Pages the reader thread reads ahead of the one being folded (≈ 8,000 events: enough to ride out either thread losing
 * its core for a while on a busy machine).
 */
const READ_AHEAD_PAGES = 16;

/**
 * At most this many events per commit: a storm of appends is committed in slices, so one
 * commit never holds the writer (or, without the writer thread, the event loop) for long.
 */
const MAX_BATCH_EVENTS = 4096;
/**
 * Batches out to the writer thread at once: one committing, the next already there. Writes
 * arriving meanwhile wait, and go together when one is answered.
 */
const PIPELINE_DEPTH = 2;
/**
 * When the writer is idle and this many events (or more) wait, they go as two batches: the
 * first half's callers decide their next writes while the second half commits, and from then
 * on the two groups take turns (otherwise every writer would wait on one commit, and the event
 * loop would idle through each fsync).
 */
const SPLIT_AT_EVENTS = 512;

/**
 * The embedded default store: one SQLite file in WAL mode with synchronous=FULL, so an append
 * acknowledged to a caller has been fsynced and survives kill -9 (and power loss).
 *
 * Group commit: appends and checkpoint saves are queued and written together, at the end of the
 * current turn of the event loop (setImmediate), in one IMMEDIATE transaction: one fsync for
 * all of them (SqliteBatchWriter decides each write inside it). Every caller is settled only
 * after COMMIT returned. With `writerThread` the commits run on a worker (SqliteWriterThread), in
 * the order sent, at most two batches out at once; reads stay on this thread's own connection,
 * and see every acknowledged write (WAL: each read starts from the last commit).
 */
export class SqliteEventStore implements EventStore, CheckpointStore {
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private closed = false;
  private readonly statements: ReturnType<SqliteEventStore["prepareStatements"]>;
  private readonly filtered: SqliteFilteredReader;
  /** The hash chain over the log, its genesis and its signed checkpoints (docs/audit.md). */
  readonly auditLog: AuditLog;
  private readonly groupCommit: boolean;
  /** The write side on this thread (no writer thread, or one commit per write). */
  private readonly writer: SqliteBatchWriter | undefined;
  private readonly writerDb: Database.Database | undefined;
  /** Whether commits go to a writer thread; it starts with the first write (a store only read never starts one). */
  private readonly threaded: boolean;
  private readonly readAheadFrom: number;
  private thread: SqliteWriterThread | undefined;
  private readonly settling = new Set<Promise<void>>();
  private queue: Pending[] = [];
  private queuedEvents = 0;
  private flushScheduled = false;
  /** Commits that stored events, so far: what a subscription's pass compares to know it has read them all. */
  private commitsWithEvents = 0;
  /** What subscriptions take instead of reading back what was just committed; kept while there are any. */
  private readonly tail = new CommittedTail();
  private subscriptions = 0;
  private stats = { commits: 0, appends: 0, events: 0, lastBatchAppends: 0, lastBatchEvents: 0, largestBatchEvents: 0 };

  constructor(
    readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
    let db: Database.Database | undefined;
    try {
      mkdirSync(dirname(file), { recursive: true });
      // SQLite would open a file it cannot write read-only, creating -wal and -shm beside it.
      const readOnly = existsSync(file) ? readOnlyCause(file, "SQLITE_CANTOPEN") : undefined;
      if (readOnly !== undefined)
        throw new StoreUnavailableError({ reason: `cannot open SQLite store ${file}: ${readOnly}` });
      db = openWriteConnection(file);
      // Before anything is created or added: a newer Shoal's file is left as it is.
      const version = checkStoreFileVersion(db, file);
      db.exec(SCHEMA);
      addSchemaVersionColumn(db);
      addNewerSchemaIndex(db);
      const open = db;
      // One transaction with the version bump: an upgrade interrupted is done again, whole, at the next open.
      db.transaction(() => {
        addAuditSchema(open, FEED_FILE_VERSION, version < FEED_FILE_VERSION, options.logger);
        addChainSchema(open, new Date().toISOString(), options.logger);
        if (version < STORE_FILE_VERSION) open.pragma(`user_version = ${STORE_FILE_VERSION}`);
      }).immediate();
      this.db = db;
      this.statements = this.prepareStatements();
      this.filtered = new SqliteFilteredReader(db);
      this.auditLog = new SqliteAuditLog(db, (f) => {
        this.assertOpen();
        return this.guarded(f);
      });
    } catch (e) {
      // A half-opened store must not keep the file open (and its filesystem busy).
      db?.close();
      if (e instanceof StoreUnavailableError || e instanceof NewerStoreError) throw e;
      const failure = storeFailure(e, file);
      const why = failure instanceof StoreUnavailableError ? failure.reason : (e as Error).message;
      throw new StoreUnavailableError({ reason: `cannot open SQLite store ${file}: ${why}` });
    }
    this.groupCommit = options.groupCommit ?? true;
    this.threaded = this.groupCommit && (options.writerThread ?? false);
    this.readAheadFrom = options.readAheadFrom ?? READ_AHEAD_FROM;
    if (!this.threaded) this.writer = new SqliteBatchWriter(this.db, file);
    this.appended.setMaxListeners(0);
  }

  // Prepared once: catch-up reads are the store's hot path on this thread.
  private prepareStatements() {
    return {
      readStream: this.db
        .prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`)
        .raw(),
      streamRevision: this.db.prepare("SELECT max(revision) FROM events WHERE stream = ?").pluck(),
      readAll: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw(),
      loadCheckpoint: this.db.prepare("SELECT position FROM checkpoints WHERE name = ?"),
      head: this.db.prepare("SELECT max(position) FROM events").pluck(),
    };
  }

  /**
   * Refuses a store holding an event of a schema version newer than `known` says this Shoal reads
   * of its type (types not named: version 1), naming the first such event.
   */
  refuseNewerEvents(known: Readonly<Record<string, number>>): void {
    this.assertOpen();
    const found = this.guarded(() => newerSchemaEvent(this.db, known));
    if (found === undefined) return;
    throw new NewerStoreError({
      reason:
        `stream ${found.stream}@${found.revision} (position ${found.position}) holds a ${found.type} of schema version ${found.schemaVersion}; ` +
        `this Shoal reads ${found.type} up to version ${found.known}`,
    });
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

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.assertOpen();
      // Encoded here, so data that is not JSON fails this append alone, before it is queued.
      const encoded: EncodedBatch = [OP_APPEND, stream, expected, events.length];
      for (const e of events) {
        const time = e.metadata.time;
        const data = JSON.stringify(e.data);
        const metadata = JSON.stringify(e.metadata);
        // The actor goes beside the JSON, so the filter indexes cost the insert no JSON work.
        const [actorType, actorId] = actorColumns(e.metadata, metadata);
        encoded.push(
          e.id,
          e.type,
          data,
          metadata,
          typeof time === "string" ? time : null,
          schemaVersionColumn(e.metadata),
          actorType,
          actorId,
        );
      }
      this.enqueue({
        kind: OP_APPEND,
        encoded,
        events: events.length,
        resolve: resolve as (r: AppendResult | undefined) => void,
        reject,
      });
    });
  }

  private enqueue(op: Pending): void {
    this.queue.push(op);
    this.queuedEvents += op.events;
    if (!this.groupCommit) this.flush();
    else this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushSlice);
    }
  }

  /** At most MAX_BATCH_EVENTS events per commit; the rest waits for the next turn, so I/O and timers run between. */
  private readonly flushSlice = (): void => {
    this.flushScheduled = false;
    if (this.threaded) this.send((this.thread ??= new SqliteWriterThread(this.file)), PIPELINE_DEPTH);
    else {
      if (this.queue.length > 0) this.commitHere(this.take(MAX_BATCH_EVENTS));
      if (this.queue.length > 0) this.scheduleFlush();
    }
  };

  /** The queue's head, up to `events` events (at least one write). */
  private take(events: number): Pending[] {
    let take = 0;
    let n = 0;
    while (take < this.queue.length && (take === 0 || n < events)) n += (this.queue[take++] as Pending).events;
    this.queuedEvents -= n;
    return this.queue.splice(0, take);
  }

  /** Batches to the writer thread while fewer than `depth` are out. */
  private send(thread: SqliteWriterThread, depth: number): void {
    while (this.queue.length > 0 && thread.inFlight < depth) {
      const split = thread.inFlight === 0 && this.queuedEvents >= SPLIT_AT_EVENTS;
      const batch = this.take(split ? Math.min(MAX_BATCH_EVENTS, Math.ceil(this.queuedEvents / 2)) : MAX_BATCH_EVENTS);
      const settled = thread.commit(encode(batch)).then((result) => {
        this.settling.delete(settled);
        this.settle(batch, result);
        // Writes made while this batch was out, and those its callers make now (after this turn).
        if (this.queue.length > 0 && !this.closed) this.scheduleFlush();
      });
      this.settling.add(settled);
    }
  }

  /** Everything queued, now (close, and the one-commit-per-write mode). */
  private flush(): void {
    while (this.queue.length > 0) this.commitHere(this.take(this.groupCommit ? MAX_BATCH_EVENTS : 0));
  }

  private commitHere(batch: readonly Pending[]): void {
    this.settle(batch, (this.writer as SqliteBatchWriter).commit(encode(batch)));
  }

  private settle(batch: readonly Pending[], result: BatchResult): void {
    if (result.failure !== undefined) {
      // Rolled back: nothing of this batch is stored, so none of its callers may hear otherwise.
      const failure = toError(result.failure);
      for (const op of batch) op.reject(failure);
      return;
    }
    const { values, refusals } = result;
    let refused = 0;
    let appends = 0;
    let events = 0;
    let saves = 0;
    for (let i = 0; i < batch.length; i++) {
      const op = batch[i] as Pending;
      if (refusals[refused] === i) {
        op.reject(toError(refusals[refused + 1] as WriteFailure));
        refused += 2;
      } else if (op.kind === OP_APPEND) {
        appends++;
        events += op.events;
        if (this.subscriptions > 0) this.tail.add(op.encoded, values[2 * i] as number, values[2 * i + 1] as number);
        op.resolve({ nextExpectedRevision: values[2 * i] as number, position: values[2 * i + 1] as number });
      } else {
        if (op.kind === OP_SAVE) saves++;
        op.resolve(undefined);
      }
    }
    // A start-up check alone is not a commit of the store's writes.
    if (batch.length === 1 && (batch[0] as Pending).kind === OP_CHECK) return;
    const s = this.stats;
    s.commits++;
    s.appends += appends;
    s.events += events;
    s.lastBatchAppends = appends;
    s.lastBatchEvents = events;
    s.largestBatchEvents = Math.max(s.largestBatchEvents, events);
    const committed: CommitBatch = { appends, events, saves };
    this.appended.emit("commit", committed);
    if (events > 0) {
      this.commitsWithEvents++;
      this.appended.emit("append");
    }
  }

  async streamRevision(stream: string): Promise<number> {
    this.assertOpen();
    return this.guarded(() => this.statements.streamRevision.get(stream) as number | null) ?? -1;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const rows = this.guarded(
      () => this.statements.readStream.all(stream, options.fromRevision ?? 0, options.maxCount ?? -1) as Row[],
    );
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

  /** In one read transaction: the sub-reads, the time marks and the head are of the same commit. */
  async readFiltered(filter: EventFilter, options: ReadFilteredOptions): Promise<FilteredPage> {
    this.assertOpen();
    return this.guarded(() => this.db.transaction(() => this.filtered.read(filter, options))());
  }

  async positionAt(time: number): Promise<number> {
    this.assertOpen();
    return this.guarded(() => this.db.transaction(() => this.filtered.positionAt(time))());
  }

  async timeBounds(since?: number, until?: number): Promise<PositionBounds> {
    this.assertOpen();
    return this.guarded(() => this.db.transaction(() => this.filtered.timeBounds(since, until))());
  }

  /** Checkpoints live in their own table: the newest event's position is the table's largest. */
  async headPosition(): Promise<number> {
    this.assertOpen();
    return this.guarded(() => this.statements.head.get() as number | null) ?? 0;
  }

  /**
   * A long replay reads ahead on a reader thread (its own read-only connection: WAL lets it read
   * beside the writer) while the caller folds; a short one reads on this thread, page by page.
   */
  readAllPages(options: ReadAllPagesOptions): AsyncIterable<readonly RecordedEvent[]> {
    this.assertOpen();
    const after = options.after ?? 0;
    const head = this.guarded(() => this.statements.head.get() as number | null) ?? 0;
    if (head - after < this.readAheadFrom) return readAllPagesInline((o) => this.readAll(o), options);
    return readAheadPages(this.file, { after, pageSize: options.pageSize, depth: READ_AHEAD_PAGES });
  }

  subscribeToAll(
    options: { readonly after?: number },
    handler: (event: RecordedEvent) => Promise<void> | void,
  ): StoreSubscription {
    this.subscriptions++;
    const subscription = pollingSubscription({
      after: options.after ?? 0,
      readPages: (after) => this.pagesAfter(after),
      pageSize: BATCH,
      commits: () => this.commitsWithEvents,
      waitForAppend: (seen, signal) =>
        new Promise<void>((resolve) => {
          if (seen !== this.commitsWithEvents || signal.aborted) {
            resolve();
            return;
          }
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
    void subscription.done
      .catch(() => undefined)
      .finally(() => {
        if (--this.subscriptions === 0) this.tail.clear();
      });
    return subscription;
  }

  /**
   * A subscription's pass: the events this process just committed straight from the tail while it
   * holds the next position, then (or else) the store itself. A long catch-up (a processor far
   * behind) reads ahead on the reader thread, as a replay does.
   */
  private async *pagesAfter(after: number): AsyncGenerator<readonly RecordedEvent[]> {
    let position = after;
    let fromTail = false;
    for (let page = this.tail.after(position, BATCH); page !== undefined; page = this.tail.after(position, BATCH)) {
      this.assertOpen();
      fromTail = true;
      yield page;
      position = (page[page.length - 1] as RecordedEvent).position;
    }
    // Up to this process's newest commit: another process's writes are found by the poll, or by the gap they leave.
    if (fromTail && position >= this.tail.newest) return;
    yield* this.readAllPages({ after: position, pageSize: BATCH });
  }

  async load(name: string): Promise<number | undefined> {
    this.assertOpen();
    const row = this.guarded(() => this.statements.loadCheckpoint.get(name) as { position: number } | undefined);
    return row?.position;
  }

  /** In the same group commit as the appends around it. */
  save(name: string, position: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.assertOpen();
      this.enqueue({ kind: OP_SAVE, encoded: [OP_SAVE, name, position], events: 0, resolve: () => resolve(), reject });
    });
  }

  /**
   * A real write (fsynced like an append) to a bookkeeping table, and enough free space on the
   * file's filesystem: a read-only file, directory or filesystem, or a full disk, is refused
   * here rather than on the first command.
   */
  async checkWritable(): Promise<void> {
    this.assertOpen();
    await new Promise<AppendResult | undefined>((resolve, reject) =>
      this.enqueue({ kind: OP_CHECK, encoded: [OP_CHECK, new Date().toISOString()], events: 0, resolve, reject }),
    );
    let free: number;
    try {
      const fs = statfsSync(dirname(this.file));
      free = fs.bavail * fs.bsize;
    } catch (e) {
      throw new StoreUnavailableError({
        reason: `cannot tell how much space is free for ${this.file}: ${(e as Error).message}`,
      });
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
    if (this.threaded) {
      if (this.queue.length > 0) this.thread ??= new SqliteWriterThread(this.file);
      if (this.thread !== undefined) {
        this.send(this.thread, Infinity);
        await Promise.all(this.settling);
        await this.thread.close();
      }
    } else this.flush();
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

/** The writes of a batch, one after another. */
function encode(batch: readonly Pending[]): EncodedBatch {
  if (batch.length === 1) return (batch[0] as Pending).encoded;
  const out: EncodedBatch = [];
  for (const op of batch) for (const v of op.encoded) out.push(v);
  return out;
}
