import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
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
`;

// Catch-up subscribers are woken by appends in this process; the poll covers any other writer.
const POLL_MS = 1000;
const BATCH = 512;

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
    mkdirSync(dirname(file), { recursive: true });
    try {
      this.db = new Database(file);
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = FULL");
      this.db.pragma("busy_timeout = 5000");
      this.db.exec(SCHEMA);
      this.statements = this.prepareStatements();
    } catch (e) {
      throw new StoreUnavailableError({ reason: `cannot open SQLite store ${file}: ${(e as Error).message}` });
    }
    this.appended.setMaxListeners(0);
  }

  // Prepared once: appends and catch-up reads are the store's hot paths.
  private prepareStatements() {
    return {
      currentRevision: this.db.prepare("SELECT MAX(revision) AS r FROM events WHERE stream = ?"),
      insert: this.db.prepare("INSERT INTO events (event_id, stream, revision, type, data, metadata, time) VALUES (?, ?, ?, ?, ?, ?, ?)"),
      readStream: this.db.prepare("SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?"),
      readAll: this.db.prepare("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?"),
      loadCheckpoint: this.db.prepare("SELECT position FROM checkpoints WHERE name = ?"),
      saveCheckpoint: this.db.prepare(
        "INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position",
      ),
    };
  }

  private currentRevision(stream: string): number {
    const row = this.statements.currentRevision.get(stream) as { r: number | null };
    return row.r ?? -1;
  }

  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    const { insert } = this.statements;
    const run = this.db.transaction((): AppendResult => {
      const actual = this.currentRevision(stream);
      const ok =
        expected === "any" ||
        (expected === "no_stream" && actual === -1) ||
        (expected === "stream_exists" && actual !== -1) ||
        expected === actual;
      if (!ok) throw new WrongExpectedRevisionError({ stream, expected, actual });
      let revision = actual;
      let position = 0;
      for (const e of events) {
        revision += 1;
        const time = typeof e.metadata.time === "string" ? e.metadata.time : new Date().toISOString();
        const info = insert.run(e.id, stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), time);
        position = Number(info.lastInsertRowid);
      }
      return { nextExpectedRevision: revision, position };
    });
    const result = run.immediate();
    if (events.length > 0) this.appended.emit("append");
    return result;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const rows = this.statements.readStream.all(stream, options.fromRevision ?? 0, options.maxCount ?? -1) as Row[];
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const rows = this.statements.readAll.all(options.after ?? 0, options.maxCount ?? -1) as Row[];
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
    const row = this.statements.loadCheckpoint.get(name) as { position: number } | undefined;
    return row?.position;
  }

  async save(name: string, position: number): Promise<void> {
    this.assertOpen();
    this.statements.saveCheckpoint.run(name, position);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.appended.emit("append");
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError({ reason: `SQLite store ${this.file} is closed` });
  }
}
