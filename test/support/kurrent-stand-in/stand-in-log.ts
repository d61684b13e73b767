/**
 * The in-memory log of the KurrentDB stand-in (kurrent-stand-in.ts): a TEST DOUBLE, not a
 * database. Streams with 0-based revisions, one global order of byte-like positions (commit =
 * prepare, not contiguous), expected-revision checks and idempotent re-appends of the same ids as
 * the server makes them, and $maxCount honoured on stream reads. Nothing is ever written to disk.
 */

/** A stored event, as the server keeps it. */
export interface StandInEvent {
  readonly id: string;
  readonly stream: string;
  readonly revision: number;
  readonly position: bigint;
  readonly type: string;
  readonly contentType: string;
  /** 100 ns ticks since the Unix epoch, as the server's "created". */
  readonly created: bigint;
  readonly data: Uint8Array;
  readonly metadata: Uint8Array;
}

export type Proposed = Pick<StandInEvent, "id" | "type" | "contentType" | "data" | "metadata">;

/** "any", "no_stream", "stream_exists" or the exact revision of the stream's last event. */
export type Expected = "any" | "no_stream" | "stream_exists" | number;

export type AppendOutcome =
  | { readonly ok: true; readonly revision: number; readonly position: bigint | undefined }
  | { readonly ok: false; readonly actual: number };

/** Where the first event goes: past 0, as on a real server (its own system events come first). */
const FIRST_POSITION = 1024n;

export class StandInLog {
  readonly events: StandInEvent[] = [];
  private readonly streams = new Map<string, StandInEvent[]>();
  private readonly listeners = new Set<() => void>();
  private next = FIRST_POSITION;

  /** The revision of the stream's last event, -1 when it has none. */
  revisionOf(stream: string): number {
    return (this.streams.get(stream)?.length ?? 0) - 1;
  }

  /**
   * As the server: the expected revision must hold, except that events whose ids are already
   * stored exactly where this append would have put them are acknowledged again (no position)
   * and stored once. With an exact revision (or no_stream) the server looks for them at those
   * revisions in its index as well as in its cache of recent writes (IndexWriter.CheckCommit's
   * "strong idempotency checks"), so it recognises them however long ago they were written.
   * With "any" it looks only in that cache (its "weak idempotency checks"), whose entries age out:
   * here that check only looks at the stream's newest events, a best-effort check, not a guarantee.
   */
  append(stream: string, proposed: readonly Proposed[], expected: Expected): AppendOutcome {
    const stored = this.streams.get(stream) ?? [];
    const current = stored.length - 1;
    const at = (from: number) => proposed.every((p, i) => stored[from + i]?.id === p.id);
    if (expected === "any" || expected === "stream_exists") {
      if (expected === "stream_exists" && current === -1) return { ok: false, actual: -1 };
      const tail = stored.length - proposed.length;
      if (proposed.length > 0 && tail >= 0 && at(tail)) return { ok: true, revision: current, position: undefined };
    } else {
      const from = expected === "no_stream" ? 0 : expected + 1;
      if (current !== from - 1) {
        if (proposed.length > 0 && from <= current && at(from))
          return { ok: true, revision: from + proposed.length - 1, position: undefined };
        return { ok: false, actual: current };
      }
    }
    const created = BigInt(Date.now()) * 10_000n;
    for (const p of proposed) {
      const e: StandInEvent = { ...p, stream, revision: stored.length, position: this.next, created };
      this.next += BigInt(64 + p.data.length + p.metadata.length);
      stored.push(e);
      this.events.push(e);
    }
    this.streams.set(stream, stored);
    for (const wake of this.listeners) wake();
    return { ok: true, revision: stored.length - 1, position: stored.at(-1)?.position };
  }

  /** The stream's events as a reader sees them: those its $maxCount still keeps. */
  stream(stream: string): readonly StandInEvent[] | undefined {
    const stored = this.streams.get(stream);
    if (stored === undefined) return undefined;
    const maxCount = this.maxCountOf(stream);
    return maxCount === undefined ? stored : stored.slice(Math.max(0, stored.length - maxCount));
  }

  private maxCountOf(stream: string): number | undefined {
    const meta = this.streams.get(`$$${stream}`)?.at(-1);
    if (meta === undefined) return undefined;
    const value = (JSON.parse(Buffer.from(meta.data).toString("utf8")) as { $maxCount?: unknown }).$maxCount;
    return typeof value === "number" ? value : undefined;
  }

  /** The index in `events` of the first event past `position` (their count when there is none). */
  indexAfter(position: bigint): number {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.position > position) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  *forwardsFrom(index: number, matches: (e: StandInEvent) => boolean): Generator<StandInEvent> {
    for (let i = index; i < this.events.length; i++) if (matches(this.events[i]!)) yield this.events[i]!;
  }

  /** From the event before `index` back to the first. */
  *backwardsFrom(index: number, matches: (e: StandInEvent) => boolean): Generator<StandInEvent> {
    for (let i = index - 1; i >= 0; i--) if (matches(this.events[i]!)) yield this.events[i]!;
  }

  /** Calls `wake` after every append until the returned function is called. */
  onAppend(wake: () => void): () => void {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  }
}
