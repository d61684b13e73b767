import type Database from "better-sqlite3";
import { checkFilteredRead, inTimeWindow, matchesNothing } from "../store/event-filter.ts";
import type {
  ActorFilter,
  EventFilter,
  FilteredPage,
  PositionBounds,
  ReadFilteredOptions,
  RecordedEvent,
} from "../store/event-store.ts";
import { ACTOR_ELSEWHERE } from "./audit-schema.ts";
import { COLUMNS, SqliteRecordedEvent, type Row } from "./sqlite-recorded-event.ts";
import { MAX_TIME_SKEW, timeMs } from "./time-marks.ts";

/** Rows a time-filtered page reads at a time, at least (its own size when larger). */
const TIME_STEP = 128;

/** Index ranges from which a filter of types alone first reads the table (scanFirst). */
const SCAN_FIRST_RANGES = 32;
/** The rows scanFirst reads, in pages. */
const SCAN_WINDOW = 4;

/** The rows of an actor's own stream a page looks at, at most, unless the read names a scan budget. */
export const OWN_STREAM_BUDGET = 1_000;

/**
 * Positions after `cursor`, up to `hi`, in order, at most `limit` of them. One with `reach` reads
 * only up to the position it gives (at most `hi`): the union is complete only that far.
 */
interface SubRead {
  (cursor: number, hi: number, limit: number): number[];
  readonly reach?: (cursor: number, hi: number) => number;
}

/** Rows of one index with some leading columns equal (`equal`, with its arguments), in position order. */
interface IndexRange {
  readonly index: string;
  readonly equal: string;
  readonly args: readonly unknown[];
}

/**
 * The planner of filtered reads. Types and actors have indexes whose rows are in position order
 * (audit-schema.ts), and a stream has (stream, revision), so each part of the filter becomes a few
 * sub-reads of positions, each a range of one index with no sort; the sub-reads are merged in
 * position order and only then the rows are read. The time window is first turned
 * into positions by the time marks, and the exact comparison is left to the rows at its edges.
 *
 * | filter             | sub-reads                                                                  |
 * |--------------------|----------------------------------------------------------------------------|
 * | streams (+ more)   | per stream: (stream, revision) from the cursor on, the rest checked on rows |
 * |                    | (or, when they hold fewer rows after the cursor, the types' and actors'    |
 * |                    | sub-reads with the stream checked on their rows)                           |
 * | actors (+ types)   | per actor and type: events_by_actor / events_by_actor_type, over the types |
 * |                    | that actor has (found by a skip-scan of the same index) that are asked for |
 * |                    | and, for an actor with an id, its own stream (`<type>-<id>`: a node's      |
 * |                    | `node-<id>`), the actor and types checked on rows (not in events_by_actor) |
 * | types              | per type and actor type present: events_by_actor_type; with 32 ranges or   |
 * |                    | more, the table's next rows first, their types checked (scanFirst)         |
 * | time only, nothing | one range of the table                                                     |
 *
 * With streams, the types and actors asked for too are checked on the stream's rows (an entity's
 * stream is short next to a type's or an actor's history), unless the stream is the longer side:
 * one node's 50,000 events asked for a type it holds 10 of (streamOrIndexRead), and the index
 * holds the stream's rows of every actor asked for (it does not for an actor on its own stream).
 */
export class SqliteFilteredReader {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private statement(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (s === undefined) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** One page; the caller runs it in a read transaction, so every sub-read sees the same commit. */
  read(filter: EventFilter, options: ReadFilteredOptions): FilteredPage {
    checkFilteredRead(filter, options);
    const head = (this.statement("SELECT max(position) FROM events").pluck().get() as number | null) ?? 0;
    const after = options.after ?? 0;
    const bound = options.through ?? head;
    // Not past the head: a position not yet written is not read yet.
    const end: FilteredPage = { events: [], scannedThrough: Math.max(after, Math.min(bound, head)) };
    if (matchesNothing(filter)) return end;
    let lo = after;
    let hi = Math.min(bound, head);
    if (filter.since !== undefined || filter.until !== undefined) {
      const window = this.timeBounds(filter.since, filter.until);
      lo = Math.max(lo, window.after);
      if (window.through !== undefined) hi = Math.min(hi, window.through);
    }
    if (lo >= hi) return end;

    const subReads = this.plan(filter, options.scanBudget ?? OWN_STREAM_BUDGET);
    const timed = filter.since !== undefined || filter.until !== undefined;
    const rowAt = this.statement(`SELECT ${COLUMNS} FROM events WHERE position = ?`).raw();
    const events: RecordedEvent[] = [];
    let cursor = lo;
    for (;;) {
      const limit = options.maxCount - events.length;
      // Rows near the edges of a time window may fail its comparison: there, read on in longer steps.
      const step = timed ? Math.max(limit, TIME_STEP) : limit;
      const merged = subReads === undefined ? undefined : merge(subReads, cursor, hi, step);
      const batch = merged === undefined ? this.rangeRows(cursor, hi, step) : merged.positions;
      for (const item of batch) {
        const row = typeof item === "number" ? (rowAt.get(item) as Row) : item;
        cursor = row[0];
        if (!inTimeWindow(row[7], filter)) continue;
        events.push(SqliteRecordedEvent.fromRow(row));
        if (events.length === options.maxCount) return { events, scannedThrough: cursor };
      }
      if (batch.length < step) {
        // An actor's own stream read only part of the way (its budget): the page ends there, short.
        const through = merged?.through ?? hi;
        return { events, scannedThrough: through < hi ? through : end.scannedThrough };
      }
    }
  }

  /** The sub-reads of a filter with an equality in it; undefined for a plain range (time only, or nothing). */
  private plan(filter: EventFilter, budget: number): SubRead[] | undefined {
    const types = filter.types === undefined ? undefined : [...new Set(filter.types)];
    const actors = filter.actors === undefined ? undefined : distinctActors(filter.actors);
    if (filter.streams !== undefined) {
      const residual = rowCondition(types, actors);
      const streams = [...new Set(filter.streams)];
      const ranges = this.indexRanges(types, actors);
      const own = new Set(actors?.flatMap(ownStream));
      return streams.map((stream) =>
        ranges === undefined || own.has(stream)
          ? this.streamRead(stream, residual)
          : this.streamOrIndexRead(stream, residual, ranges),
      );
    }
    const ranges = this.indexRanges(types, actors);
    if (ranges === undefined) return undefined;
    const reads = ranges.map((range) => this.indexRead(range));
    // The rows events_by_actor leaves out: each actor's own stream, read for that actor (and the types) alone.
    for (const actor of actors ?? [])
      for (const stream of ownStream(actor))
        reads.push(this.ownStreamRead(stream, rowCondition(types, [actor]), budget));
    // Many types alone (the feed's default page is 35, each over every actor type): they are most rows as a rule.
    if (actors === undefined && types !== undefined && ranges.length >= SCAN_FIRST_RANGES)
      return [scanFirst(this.typeScan(types), reads)];
    return reads;
  }

  /** The rows of the types, found by reading the table in position order and checking each row's type. */
  private typeScan(types: readonly string[]): SubRead {
    const read = this.statement(
      "SELECT position FROM events NOT INDEXED WHERE position > ? AND position <= ? " +
        `AND type IN (${types.map(() => "?").join(", ")}) ORDER BY position LIMIT ?`,
    ).pluck();
    return (cursor, hi, limit) => read.all(cursor, hi, ...types, limit) as number[];
  }

  /** The index ranges of the types and actors (one per actor and type); undefined when there are neither. */
  private indexRanges(
    types: readonly string[] | undefined,
    actors: readonly ActorFilter[] | undefined,
  ): IndexRange[] | undefined {
    if (actors !== undefined) {
      return actors.flatMap((actor) => {
        const [index, prefix, args] =
          actor.id === undefined
            ? (["events_by_actor_type", "actor_type = ?", [actor.type]] as const)
            : ([
                "events_by_actor",
                `actor_type = ? AND actor_id = ? AND ${ACTOR_ELSEWHERE}`,
                [actor.type, actor.id],
              ] as const);
        // Only the types this actor has: alice over the 19 node types is a handful of ranges, not 19.
        const present = this.typesIn(index, prefix, args);
        const wanted = types === undefined ? present : types.filter((type) => present.includes(type));
        return wanted.map((type): IndexRange => ({
          index,
          equal: `${prefix} AND type = ?`,
          args: [...args, type],
        }));
      });
    }
    if (types !== undefined) {
      // One index serves types with and without actors: per type, one range for each actor type there is (a handful).
      const actorTypes = this.actorTypes();
      return types.flatMap((type) =>
        actorTypes.map((actorType): IndexRange => ({
          index: "events_by_actor_type",
          equal: "actor_type IS ? AND type = ?",
          args: [actorType, type],
        })),
      );
    }
    return undefined;
  }

  /** The range's positions, those whose rows meet `residual` (a condition on the row, ` AND …`) when one is given. */
  private indexRead(range: IndexRange, residual = { sql: "", args: [] as readonly unknown[] }): SubRead {
    const read = this.statement(
      `SELECT position FROM events INDEXED BY ${range.index} WHERE ${range.equal} AND position > ? AND position <= ?` +
        `${residual.sql} ORDER BY position LIMIT ?`,
    ).pluck();
    return (cursor, hi, limit) => read.all(...range.args, cursor, hi, ...residual.args, limit) as number[];
  }

  /** How many positions the range holds after `cursor` up to `hi`, counted up to `cap`: from the index alone. */
  private countIn(range: IndexRange, cursor: number, hi: number, cap: number): number {
    return this.statement(
      `SELECT count(*) FROM (SELECT 1 FROM events INDEXED BY ${range.index} WHERE ${range.equal} ` +
        "AND position > ? AND position <= ? LIMIT ?)",
    )
      .pluck()
      .get(...range.args, cursor, hi, cap) as number;
  }

  /**
   * A stream's events of some types or actors, read from the smaller side: the stream's rows after
   * the cursor with the types and actors checked on them, or the types' and actors' index rows
   * with the stream checked on them. Either costs a row lookup for each row it looks at, and finds
   * the page's events as often as the other side's rows are a larger share of its own, so the side
   * with fewer rows after the cursor is the cheaper. The stream's are counted exactly by
   * revisions; the index rows are counted from the index alone, and only up to the stream's count.
   */
  private streamOrIndexRead(
    stream: string,
    residual: { sql: string; args: readonly unknown[] },
    ranges: readonly IndexRange[],
  ): SubRead {
    const walk = this.streamRead(stream, residual);
    const inStream = { sql: " AND stream = ?", args: [stream] };
    const probe = ranges.map((range) => this.indexRead(range, inStream));
    return (cursor, hi, limit) => {
      const rows = this.revisionsAfter(stream, cursor);
      let indexed = 0;
      for (const range of ranges) {
        if (indexed >= rows) break;
        indexed += this.countIn(range, cursor, hi, rows - indexed);
      }
      return indexed < rows ? merge(probe, cursor, hi, limit).positions : walk(cursor, hi, limit);
    };
  }

  /**
   * A stream's events in revision order, which is their position order: it starts at the first
   * revision past the cursor (a binary search on (stream, revision)), so a long stream read late
   * does not walk its beginning again.
   */
  private streamRead(stream: string, residual: { sql: string; args: readonly unknown[] }): SubRead {
    const read = this.statement(
      "SELECT position FROM events INDEXED BY sqlite_autoindex_events_2 WHERE stream = ? AND revision >= ? " +
        `AND position > ? AND position <= ?${residual.sql} ORDER BY revision LIMIT ?`,
    ).pluck();
    return (cursor, hi, limit) =>
      read.all(stream, this.firstRevisionAfter(stream, cursor), cursor, hi, ...residual.args, limit) as number[];
  }

  /**
   * The rows of an actor on its own stream, which events_by_actor leaves out: the stream's rows,
   * the actor checked on each, after the cursor up to `hi` (merge lowers it to where the other
   * sub-reads already found a page) and at most `budget` of them. A node's stream may be long and
   * mostly others' (the node manager's health events): past the budget the page ends short, and
   * the next one reads on from there, as a scanning store's pages do.
   */
  private ownStreamRead(stream: string, residual: { sql: string; args: readonly unknown[] }, budget: number): SubRead {
    const read = this.statement(
      "SELECT position FROM events INDEXED BY sqlite_autoindex_events_2 WHERE stream = ? AND revision >= ? " +
        `AND revision < ? AND position > ? AND position <= ?${residual.sql} ORDER BY revision LIMIT ?`,
    ).pluck();
    const at = this.statement("SELECT position FROM events WHERE stream = ? AND revision = ?").pluck();
    // The revisions after the cursor up to `hi`, and where the budget cuts them; merge asks twice for the same.
    let last = { cursor: -1, hi: -1, first: 0, end: 0, cut: false };
    const window = (cursor: number, hi: number) => {
      if (last.cursor !== cursor || last.hi !== hi) {
        const first = this.firstRevisionAfter(stream, cursor);
        const upTo = this.firstRevisionAfter(stream, hi);
        last = { cursor, hi, first, end: Math.min(upTo, first + budget), cut: upTo > first + budget };
      }
      return last;
    };
    const sub = (cursor: number, hi: number, limit: number) => {
      const { first, end } = window(cursor, hi);
      if (first >= end) return [];
      return read.all(stream, first, end, cursor, hi, ...residual.args, limit) as number[];
    };
    // Complete to `hi`, or, when the budget cuts the stream's rows short of it, through the budget's last row.
    const reach = (cursor: number, hi: number) => {
      const { end, cut } = window(cursor, hi);
      return cut ? ((at.get(stream, end - 1) as number | undefined) ?? hi) : hi;
    };
    return Object.assign(sub, { reach });
  }

  /** How many of the stream's events come after the position. */
  private revisionsAfter(stream: string, position: number): number {
    return this.lastRevision(stream) + 1 - this.firstRevisionAfter(stream, position);
  }

  private lastRevision(stream: string): number {
    return (
      (this.statement("SELECT max(revision) FROM events WHERE stream = ?").pluck().get(stream) as number | null) ?? -1
    );
  }

  private firstRevisionAfter(stream: string, position: number): number {
    const last = this.lastRevision(stream);
    const at = this.statement("SELECT position FROM events WHERE stream = ? AND revision = ?").pluck();
    let lo = 0;
    let hi = last + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = at.get(stream, mid) as number | undefined;
      // A revision missing (only a hand-edited store has one) ends the search early: read from there.
      if (p === undefined || p > position) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The types present under an index's prefix, one probe each (a skip-scan), in type order. */
  private typesIn(index: string, prefix: string, args: readonly unknown[]): string[] {
    const first = this.statement(
      `SELECT type FROM events INDEXED BY ${index} WHERE ${prefix} ORDER BY type LIMIT 1`,
    ).pluck();
    const next = this.statement(
      `SELECT type FROM events INDEXED BY ${index} WHERE ${prefix} AND type > ? ORDER BY type LIMIT 1`,
    ).pluck();
    const out: string[] = [];
    for (
      let t = first.get(...args) as string | undefined;
      t !== undefined;
      t = next.get(...args, t) as string | undefined
    )
      out.push(t);
    return out;
  }

  /** The actor types present (null first, for events that name none), one probe each. */
  private actorTypes(): (string | null)[] {
    const none = this.statement(
      "SELECT 1 FROM events INDEXED BY events_by_actor_type WHERE actor_type IS NULL LIMIT 1",
    ).pluck();
    const first = this.statement(
      "SELECT actor_type FROM events INDEXED BY events_by_actor_type WHERE actor_type IS NOT NULL " +
        "ORDER BY actor_type LIMIT 1",
    ).pluck();
    const next = this.statement(
      "SELECT actor_type FROM events INDEXED BY events_by_actor_type WHERE actor_type > ? ORDER BY actor_type LIMIT 1",
    ).pluck();
    const out: (string | null)[] = none.get() === undefined ? [] : [null];
    for (let t = first.get() as string | undefined; t !== undefined; t = next.get(t) as string | undefined) out.push(t);
    return out;
  }

  private rangeRows(cursor: number, hi: number, limit: number): Row[] {
    return this.statement(
      `SELECT ${COLUMNS} FROM events WHERE position > ? AND position <= ? ORDER BY position LIMIT ?`,
    )
      .raw()
      .all(cursor, hi, limit) as Row[];
  }

  /** See EventStore.positionAt. */
  positionAt(time: number): number {
    if (!Number.isFinite(time)) throw new RangeError(`time must be a time in ms, got ${time}`);
    const mark = this.statement(
      "SELECT position, max_time_ms FROM time_marks WHERE max_time_ms <= ? ORDER BY max_time_ms DESC, position DESC LIMIT 1",
    ).get(time) as { position: number; max_time_ms: number } | undefined;
    let max = mark?.max_time_ms ?? -Infinity;
    let through = mark?.position ?? 0;
    // Up to the next mark at most: its maximum is past `time`, or there is none after.
    const rows = this.statement("SELECT position, time FROM events WHERE position > ? ORDER BY position").raw();
    for (const [position, text] of rows.iterate(through) as Iterable<[number, string]>) {
      const t = timeMs(text);
      if (t > max) max = t;
      if (max > time) break;
      through = position;
    }
    return through;
  }

  /** See EventStore.timeBounds. */
  timeBounds(since: number | undefined, until: number | undefined): PositionBounds {
    for (const [name, v] of [
      ["since", since],
      ["until", until],
    ] as const)
      if (v !== undefined && !Number.isFinite(v)) throw new RangeError(`${name} must be a time in ms, got ${v}`);
    // Every event up to a mark whose maximum is before `since` is before it too.
    const after =
      since === undefined
        ? 0
        : ((this.statement(
            "SELECT position FROM time_marks WHERE max_time_ms < ? " +
              "ORDER BY max_time_ms DESC, position DESC LIMIT 1",
          )
            .pluck()
            .get(since) as number | undefined) ?? 0);
    if (until === undefined) return { after };
    // From a mark whose maximum is past `until` by more than any event ever lagged the maximum, all are after `until`.
    const skew =
      (this.statement("SELECT value FROM store_meta WHERE name = ?").pluck().get(MAX_TIME_SKEW) as
        number | undefined) ?? 0;
    const mark = this.statement(
      "SELECT position FROM time_marks WHERE max_time_ms > ? ORDER BY max_time_ms, position LIMIT 1",
    )
      .pluck()
      .get(until + skew) as number | undefined;
    return mark === undefined ? { after } : { after, through: mark - 1 };
  }
}

/** The stream an actor with an id acts on as its own (a node's `node-<id>`), whose rows events_by_actor leaves out. */
function ownStream(actor: ActorFilter): string[] {
  return actor.id === undefined ? [] : [`${actor.type}-${actor.id}`];
}

function distinctActors(actors: readonly ActorFilter[]): ActorFilter[] {
  const seen = new Map<string, ActorFilter>();
  for (const a of actors) seen.set(JSON.stringify([a.type, a.id ?? null]), a);
  return [...seen.values()];
}

/** The types and the actors as a condition on a row: ` AND …`, or nothing. */
function rowCondition(
  types: readonly string[] | undefined,
  actors: readonly ActorFilter[] | undefined,
): { sql: string; args: readonly unknown[] } {
  let sql = "";
  const args: unknown[] = [];
  if (types !== undefined) {
    sql += ` AND type IN (${types.map(() => "?").join(", ")})`;
    args.push(...types);
  }
  if (actors !== undefined) {
    const actor = actorCondition(actors);
    sql += actor.sql;
    args.push(...actor.args);
  }
  return { sql, args };
}

/** The actors as a condition on a row: ` AND (…)`. */
function actorCondition(actors: readonly ActorFilter[]): { sql: string; args: readonly unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  for (const a of actors) {
    if (a.id === undefined) {
      parts.push("actor_type = ?");
      args.push(a.type);
    } else {
      parts.push("(actor_type = ? AND actor_id = ?)");
      args.push(a.type, a.id);
    }
  }
  return { sql: ` AND (${parts.join(" OR ")})`, args };
}

/**
 * Reads the rows after the cursor a window at a time (SCAN_WINDOW times the page) with `scan`, on
 * to the next window while the last one found at least as many as the page still lacks, and then
 * the rest with `reads` from where the scan stopped. Index ranges cost a seek and up to a page of
 * positions each however few of them the page takes, so a filter of many ranges whose rows are a
 * good share of the log finds its page sooner in the table; one whose rows are few pays one window
 * a page on top of its ranges.
 */
function scanFirst(scan: SubRead, reads: readonly SubRead[]): SubRead {
  return (cursor, hi, limit) => {
    const found: number[] = [];
    let from = cursor;
    for (;;) {
      const edge = Math.min(hi, from + limit * SCAN_WINDOW);
      const window = scan(from, edge, limit - found.length);
      for (const p of window) found.push(p);
      if (found.length === limit || edge === hi) return found;
      from = edge;
      if (window.length < limit - found.length) break;
    }
    for (const p of merge(reads, from, hi, limit - found.length).positions) found.push(p);
    return found;
  };
}

/**
 * The first `limit` positions of the union, in order, once each (two actors may both match a
 * row), and how far the union is complete (`through`: `hi` unless a sub-read reaches less far).
 * Each sub-read gives its first `limit`, so the union's first `limit` are among them; once the
 * sub-reads so far hold `limit`, the next read only up to the last of them, so a stream walked for
 * its actor's rows stops where the index ranges already found a page.
 */
function merge(
  subReads: readonly SubRead[],
  cursor: number,
  hi: number,
  limit: number,
): { positions: number[]; through: number } {
  let bound = hi;
  for (const read of subReads) if (read.reach !== undefined) bound = Math.min(bound, read.reach(cursor, hi));
  let found: number[] = [];
  for (const read of subReads) {
    for (const p of read(cursor, bound, limit)) if (p <= bound) found.push(p);
    found = firstDistinct(found, limit);
    if (found.length === limit) bound = found[limit - 1] as number;
  }
  return { positions: found, through: bound };
}

/** The first `limit` distinct positions, in order. */
function firstDistinct(positions: number[], limit: number): number[] {
  positions.sort((a, b) => a - b);
  const out: number[] = [];
  for (const p of positions) {
    if (out.length === limit) break;
    if (out[out.length - 1] !== p) out.push(p);
  }
  return out;
}
