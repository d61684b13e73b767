import Database from "better-sqlite3";
import type { ExpectedRevision } from "../store/event-store.ts";
import { eventLinkHex } from "../chain/event-link.ts";
import { loadTimeMarkState, prepareTimeMarkWrites } from "./audit-schema.ts";
import { highestPosition, loadChainHead } from "./chain-schema.ts";
import { unavailableReason } from "./sqlite-failure.ts";
import { observeTime, restoreMarks, snapshotMarks, type TimeMarkSnapshot, type TimeMarkState } from "./time-marks.ts";

/**
 * The store's writes, encoded flat so that a batch crosses to the writer thread as one
 * structured clone of strings and numbers (and costs the same in-thread):
 *
 * append: OP_APPEND, stream, expected, n, then n × (id, type, data JSON, metadata JSON, time | null, schema_version |
 * null, actor type | null, actor id | null)
 *   save:    OP_SAVE, name, position
 *   check:   OP_CHECK, time
 */
export type EncodedBatch = (string | number | null | undefined)[];
export const OP_APPEND = 0;
export const OP_SAVE = 1;
export const OP_CHECK = 2;
/** Values per event of an encoded append. */
export const EVENT_FIELDS = 8;

/** Why a write failed, as plain data; the store turns it back into the port's errors. */
export type WriteFailure =
  | { readonly t: "wrong"; readonly stream: string; readonly expected: ExpectedRevision; readonly actual: number }
  | { readonly t: "duplicate"; readonly message: string }
  | { readonly t: "unavailable"; readonly reason: string }
  | { readonly t: "sqlite"; readonly code: string; readonly message: string }
  | { readonly t: "error"; readonly name: string; readonly message: string };

/** One commit's outcome: per write its result, or its own refusal; or the whole batch rolled back. */
export interface BatchResult {
  /** Per write, in order: nextExpectedRevision, position (0, 0 for saves and checks). */
  readonly values: Float64Array;
  /** Writes refused alone: [index, failure, index, failure, …]. */
  readonly refusals: (number | WriteFailure)[];
  /** Set when nothing of the batch is stored (a failure of the store itself). */
  readonly failure?: WriteFailure;
}

export function describeFailure(e: unknown, file: string): WriteFailure {
  const reason = unavailableReason(e, file);
  if (reason !== undefined) return { t: "unavailable", reason };
  if (e instanceof Database.SqliteError) return { t: "sqlite", code: e.code, message: e.message };
  if (e instanceof Error) return { t: "error", name: e.name, message: e.message };
  return { t: "error", name: "Error", message: String(e) };
}

/** Values of the write encoded at `i`. */
function encodedLength(batch: EncodedBatch, i: number): number {
  const kind = batch[i];
  return kind === OP_APPEND ? 4 + (batch[i + 3] as number) * EVENT_FIELDS : kind === OP_SAVE ? 3 : 2;
}

interface WriterSnapshot {
  readonly marks: TimeMarkSnapshot;
  readonly given: number;
  readonly position: number;
  readonly link: string;
}

/**
 * Where the writer's chain stands: the newest event's position and link. The link is kept as its hex digits, the form
 * the next event's link text takes; SQLite's unhex() stores it as the 32 bytes of the column.
 */
interface HexChainHead {
  position: number;
  link: string;
}

const hexHead = (head: { position: number; link: Buffer }): HexChainHead => ({
  position: head.position,
  link: head.link.toString("hex"),
});

class Refusal extends Error {
  constructor(readonly failure: WriteFailure) {
    super(failure.t);
  }
}

/** A UNIQUE violation: some event id of the append is stored already (the idempotent-retry path). */
function isUniqueViolation(e: unknown): boolean {
  return e instanceof Database.SqliteError && e.code === "SQLITE_CONSTRAINT_UNIQUE";
}

function revisionMatches(expected: ExpectedRevision, actual: number): boolean {
  return (
    expected === "any" ||
    (expected === "no_stream" && actual === -1) ||
    (expected === "stream_exists" && actual !== -1) ||
    expected === actual
  );
}

/**
 * The store's write side: one connection and the group commit's transaction. It runs on the
 * event loop (the default, and one commit per write) or on the writer thread (`writerThread:
 * true`); either way the same code decides every write.
 *
 * A batch is one IMMEDIATE transaction and one fsync. Each append is checked against its own
 * expected revision inside it, after the writes before it (so two appends to one stream in one
 * batch see each other), and fails alone; a failure of the store itself (full, read-only, I/O)
 * rolls the whole batch back.
 *
 * The time marks are kept in the same transaction: the writer folds each inserted event's time
 * into its state and writes the marks and skew that are due before the batch commits. Whatever
 * is rolled back (the batch, or one append's savepoint) is taken back out of that state too.
 *
 * So is the hash chain (docs/audit.md): the writer gives each event its position itself (one
 * more than the highest ever given, as AUTOINCREMENT would) and its link, from the link and
 * position of the event before it, in the same INSERT. A rollback takes the positions and the
 * link back with it.
 */
export class SqliteBatchWriter {
  private readonly statements;
  private readonly marks: TimeMarkState;
  /** The newest event's position and link (the genesis before any). */
  private readonly chain: HexChainHead;
  /** The highest position given so far. */
  private given: number;
  private readonly writeMarks: (state: TimeMarkState) => void;
  private readonly transaction: (batch: EncodedBatch, result: BatchResult) => void;
  private readonly insertAtomically: (
    batch: EncodedBatch,
    at: number,
    stream: string,
    n: number,
    after: number,
  ) => number;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
  ) {
    this.statements = {
      currentRevision: db.prepare("SELECT MAX(revision) AS r FROM events WHERE stream = ?").pluck(),
      findEvent: db.prepare("SELECT stream, revision, position FROM events WHERE event_id = ?"),
      eventAt: db.prepare("SELECT event_id, position FROM events WHERE stream = ? AND revision = ?"),
      insert: db.prepare(
        "INSERT INTO events " +
          "(position, event_id, stream, revision, type, data, metadata, time, schema_version, actor_type, actor_id, link) " +
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, unhex(?))",
      ),
      saveCheckpoint: db.prepare(
        "INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position",
      ),
      recordCheck: db.prepare(
        "INSERT INTO store_checks (name, at) VALUES ('writable', ?) ON CONFLICT(name) DO UPDATE SET at = excluded.at",
      ),
      highestGiven: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck(),
    };
    this.marks = loadTimeMarkState(db).state;
    this.chain = hexHead(loadChainHead(db));
    this.given = Math.max(highestPosition(db), this.chain.position);
    this.writeMarks = prepareTimeMarkWrites(db);
    this.transaction = db.transaction((batch: EncodedBatch, result: BatchResult) => {
      this.followOtherWriters();
      this.applyAll(batch, result);
      this.writeMarks(this.marks);
    }).immediate;
    this.insertAtomically = db.transaction(
      (batch: EncodedBatch, at: number, stream: string, n: number, after: number) =>
        this.insert(batch, at, stream, n, after),
    );
  }

  /** Writes in a batch (the length of its result's values ÷ 2). */
  static count(batch: EncodedBatch): number {
    let ops = 0;
    for (let i = 0; i < batch.length; ops++) i += encodedLength(batch, i);
    return ops;
  }

  /** One durable commit of the batch; never throws. */
  commit(batch: EncodedBatch): BatchResult {
    const result: BatchResult = { values: new Float64Array(2 * SqliteBatchWriter.count(batch)), refusals: [] };
    const state = this.snapshot();
    try {
      this.transaction(batch, result);
      return result;
    } catch (e) {
      this.restore(state);
      // Rolled back: nothing of this batch is stored, so none of its callers may hear otherwise.
      return { values: result.values, refusals: [], failure: describeFailure(e, this.file) };
    }
  }

  /**
   * Another connection to the file (a second process) may have appended since this writer last committed: its rows
   * are links of the chain too, so this writer gives positions after them and links on from the newest, and its times
   * are in the time marks. One look-up
   * a batch, inside its IMMEDIATE transaction, so nothing can append between it and the inserts.
   */
  private followOtherWriters(): void {
    const highest = (this.statements.highestGiven.get() as number | undefined) ?? 0;
    if (highest === this.given) return;
    const head = hexHead(loadChainHead(this.db));
    this.chain.position = head.position;
    this.chain.link = head.link;
    this.given = Math.max(highest, head.position);
    // Their times count in the running maximum and the skew as this writer's own do (none pending: each commit
    // writes its marks).
    Object.assign(this.marks, loadTimeMarkState(this.db).state);
  }

  private applyAll(batch: EncodedBatch, result: BatchResult): void {
    const { values, refusals } = result;
    for (let i = 0, op = 0; i < batch.length; op++) {
      const kind = batch[i];
      const at = i;
      i += encodedLength(batch, i);
      try {
        if (kind === OP_SAVE) this.statements.saveCheckpoint.run(batch[at + 1], batch[at + 2]);
        else if (kind === OP_CHECK) this.statements.recordCheck.run(batch[at + 1]);
        else this.append(batch, at, values, op);
      } catch (e) {
        // The write's own refusals leave the batch going; a failure of the store itself ends it.
        if (e instanceof Refusal) refusals.push(op, e.failure);
        else if (!this.db.inTransaction || unavailableReason(e, this.file) !== undefined) throw e;
        else refusals.push(op, describeFailure(e, this.file));
      }
    }
  }

  private currentRevision(stream: string): number {
    return (this.statements.currentRevision.get(stream) as number | null) ?? -1;
  }

  /**
   * Insert first; only when the revision does not match or an event id is stored already does
   * it look the ids up, to tell a retried append (acknowledged again) from a conflict.
   */
  private append(batch: EncodedBatch, at: number, values: Float64Array, op: number): void {
    const stream = batch[at + 1] as string;
    const expected = batch[at + 2] as ExpectedRevision;
    const n = batch[at + 3] as number;
    const actual = this.currentRevision(stream);
    if (revisionMatches(expected, actual)) {
      if (n === 0) {
        values[2 * op] = actual;
        return;
      }
      // A single insert that fails has taught the state nothing; a savepoint's may have.
      const state = n === 1 ? undefined : this.snapshot();
      try {
        // A single INSERT that fails undoes itself; several need a savepoint to go together.
        values[2 * op + 1] =
          n === 1
            ? this.insert(batch, at + 4, stream, 1, actual)
            : this.insertAtomically(batch, at + 4, stream, n, actual);
        values[2 * op] = actual + n;
        return;
      } catch (e) {
        if (state !== undefined) this.restore(state);
        if (!isUniqueViolation(e)) throw e;
      }
    } else if (n === 0) throw new Refusal({ t: "wrong", stream, expected, actual });
    const [next, position] = this.resolveConflict(batch, at + 4, stream, n, expected, actual);
    values[2 * op] = next;
    values[2 * op + 1] = position;
  }

  private snapshot(): WriterSnapshot {
    return {
      marks: snapshotMarks(this.marks),
      given: this.given,
      position: this.chain.position,
      link: this.chain.link,
    };
  }

  /** Back to a snapshot: the writes since were rolled back, and what they taught the state with them. */
  private restore(to: WriterSnapshot): void {
    restoreMarks(this.marks, to.marks);
    this.given = to.given;
    this.chain.position = to.position;
    this.chain.link = to.link;
  }

  /** Inserts the n events encoded from `at`; the position of the last. */
  private insert(batch: EncodedBatch, at: number, stream: string, n: number, after: number): number {
    const { insert } = this.statements;
    const { chain } = this;
    let now: string | undefined;
    for (let k = 0, i = at; k < n; k++, i += EVENT_FIELDS) {
      const time = (batch[i + 4] as string | null) ?? (now ??= new Date().toISOString());
      const position = this.given + 1;
      const id = batch[i] as string;
      const revision = after + k + 1;
      const type = batch[i + 1] as string;
      const data = batch[i + 2] as string;
      const metadata = batch[i + 3] as string;
      const link = eventLinkHex(chain.link, chain.position, {
        position,
        id,
        stream,
        revision,
        type,
        time,
        data,
        metadata,
      });
      // The state moves only once the row is in: a refused INSERT has given no position and no link.
      insert.run(
        position,
        id,
        stream,
        revision,
        type,
        data,
        metadata,
        time,
        batch[i + 5],
        batch[i + 6],
        batch[i + 7],
        link,
      );
      this.given = position;
      chain.position = position;
      chain.link = link;
      observeTime(this.marks, position, time);
    }
    return this.given;
  }

  /**
   * EventStoreDB's idempotence, for SQLite: the same events (by id, in order) already stored
   * where an append with this expected revision put them is that append, acknowledged again.
   * Anything else is a wrong expected revision, or an id stored somewhere else.
   */
  private resolveConflict(
    batch: EncodedBatch,
    at: number,
    stream: string,
    n: number,
    expected: ExpectedRevision,
    actual: number,
  ): [number, number] {
    const { findEvent, eventAt } = this.statements;
    const idOf = (k: number) => batch[at + k * EVENT_FIELDS] as string;
    const found = findEvent.get(idOf(0)) as { stream: string; revision: number; position: number } | undefined;
    if (found) {
      const start = expected === "no_stream" ? 0 : typeof expected === "number" ? expected + 1 : found.revision;
      let position = found.position;
      let same = found.stream === stream && found.revision === start;
      for (let k = 1; same && k < n; k++) {
        const stored = eventAt.get(stream, start + k) as { event_id: string; position: number } | undefined;
        same = stored?.event_id === idOf(k);
        if (stored) position = stored.position;
      }
      if (same) return [start + n - 1, position];
    }
    if (!revisionMatches(expected, actual)) throw new Refusal({ t: "wrong", stream, expected, actual });
    for (let k = 0; k < n; k++) {
      const stored = findEvent.get(idOf(k)) as { stream: string; revision: number } | undefined;
      if (stored)
        throw new Refusal({
          t: "duplicate",
          message: `event ${idOf(k)} is already stored in ${stored.stream} at revision ${stored.revision}; event ids are unique`,
        });
    }
    throw new Refusal({
      t: "duplicate",
      message: `an event id of this append to ${stream} is given twice; event ids are unique`,
    });
  }
}
