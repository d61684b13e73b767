/**
 * Time marks bound a time window by positions. Times are not monotone in store order (an event's
 * time is taken when it is decided; a retried append or a group commit stores it later), so a
 * mark keeps the running maximum of the times up to its position, and the store keeps the largest
 * skew seen: how far an event's time ever lay below the running maximum before it. Both only grow,
 * so a mark is exact for every position up to it, whatever is appended later.
 */

/** A mark at the first event of each block of this many positions. */
export const MARK_EVERY = 256;
/** The name of the largest skew in `store_meta`. */
export const MAX_TIME_SKEW = "max_time_skew_ms";

/** An event's time in ms since the epoch; NaN when it does not parse (it then matches no time window). */
export function timeMs(time: string): number {
  return Date.parse(time);
}

/**
 * The writer's running state over the marks: what the next insert needs, and what the batch
 * has yet to write (marks and a larger skew) before it commits.
 */
export interface TimeMarkState {
  /** The largest time so far in ms; -Infinity before the first event with a time that parses. */
  max: number;
  /** The block (position ÷ MARK_EVERY) of the newest mark. */
  block: number;
  skew: number;
  /** The skew as stored. */
  storedSkew: number;
  /** Marks to write: position, max, position, max, … */
  readonly pending: number[];
}

export interface TimeMarkSnapshot {
  readonly max: number;
  readonly block: number;
  readonly skew: number;
  readonly storedSkew: number;
  readonly pending: number;
}

export function snapshotMarks(s: TimeMarkState): TimeMarkSnapshot {
  return { max: s.max, block: s.block, skew: s.skew, storedSkew: s.storedSkew, pending: s.pending.length };
}

/** Back to a snapshot: the writes made since were rolled back, so what they taught the state is forgotten too. */
export function restoreMarks(s: TimeMarkState, to: TimeMarkSnapshot): void {
  s.max = to.max;
  s.block = to.block;
  s.skew = to.skew;
  s.storedSkew = to.storedSkew;
  s.pending.length = to.pending;
}

/** One more event, in store order. */
export function observeTime(s: TimeMarkState, position: number, time: string): void {
  const t = timeMs(time);
  if (t > s.max) s.max = t;
  else if (s.max - t > s.skew) s.skew = s.max - t;
  const block = Math.floor(position / MARK_EVERY);
  if (block > s.block) {
    s.block = block;
    // Before any time parsed there is no maximum to record; a missing mark costs reading more, never a wrong answer.
    if (s.max !== -Infinity) s.pending.push(position, s.max);
  }
}
