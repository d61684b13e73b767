import type { RecordedEvent } from "../store/event-store.ts";
import { EVENT_FIELDS, type EncodedBatch } from "./sqlite-batch-writer.ts";
import { SqliteRecordedEvent } from "./sqlite-recorded-event.ts";

/** Events kept at most: a subscription further behind than this reads the store. */
const MAX_EVENTS = 2048;

/**
 * The newest events this process committed, as the store holds them, with no gap: what a
 * subscription following the store takes instead of reading back every append it was woken for.
 * Built from an append's encoded columns and the positions its commit returned, so an event here
 * is the row a read would return: the same id, stream, revision, type, data and metadata text,
 * time and schema version.
 *
 * Only what certainly is such a row gets in. An append whose positions do not follow the last
 * one kept (another process wrote between, or an earlier append was acknowledged again) starts
 * the tail afresh from it; one whose stored time the writer chose (its metadata had none) ends
 * the tail there. A subscription uses the tail only when it holds the very next position, so it
 * never skips an event: anything else is read from the store, as before.
 */
export class CommittedTail {
  private events: SqliteRecordedEvent[] = [];
  /** The position of the newest event committed here that the tail knows of. */
  private last = 0;

  get newest(): number {
    return this.last;
  }

  /** An append acknowledged by a commit: its `n` events end at `position`, revision `nextRevision`. */
  add(encoded: EncodedBatch, nextRevision: number, position: number): void {
    const n = encoded[3] as number;
    const first = position - n + 1;
    // Acknowledged again (stored before), or nothing stored: no new rows.
    if (n === 0 || position <= this.last) return;
    if (first !== this.last + 1) this.events = [];
    const stream = encoded[1] as string;
    for (let k = 0, i = 4; k < n; k++, i += EVENT_FIELDS) {
      const time = encoded[i + 4];
      if (typeof time !== "string") {
        // The writer stamps it at insert time: only a read knows what it stored.
        this.events = [];
        this.last = position;
        return;
      }
      this.events.push(
        new SqliteRecordedEvent(
          first + k,
          encoded[i] as string,
          stream,
          nextRevision - n + 1 + k,
          encoded[i + 1] as string,
          encoded[i + 2] as string,
          encoded[i + 3] as string,
          time,
          (encoded[i + 5] as number | null) ?? undefined,
        ),
      );
    }
    this.last = position;
    if (this.events.length > MAX_EVENTS) this.events = this.events.slice(this.events.length - MAX_EVENTS / 2);
  }

  /** The events after `position`, at most `max`, when the tail holds the next one; undefined: read the store. */
  after(position: number, max: number): readonly RecordedEvent[] | undefined {
    const oldest = this.events[0];
    if (oldest === undefined || position < oldest.position - 1 || position >= this.last) return undefined;
    const from = position - oldest.position + 1;
    return this.events.slice(from, from + max);
  }

  clear(): void {
    this.events = [];
  }
}
