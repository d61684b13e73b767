export type SortKey = string | number;

/** `<`/`>` comparison, exactly as the list API has always ordered keys and ids. */
export const compareKeys = (a: SortKey, b: SortKey): number => (a < b ? -1 : a > b ? 1 : 0);

interface Chunk {
  keys: SortKey[];
  ids: string[];
}

/** Chunks hold at most this many entries; a split halves them, so moves stay a short memmove. */
const MAX_CHUNK = 512;
const MIN_CHUNK = MAX_CHUNK / 8;
/**
 * replaceMany merges its changes in one walk of the chunks when they are at least 1/REBUILD_RATIO of the entries; fewer
 * are cheaper as a seek and a move each.
 */
const REBUILD_RATIO = 32;

/**
 * An ordered set of (key, id) pairs, ids unique within a set and keys of one type: a sorted
 * list of sorted chunks (the shape of Python's sortedcontainers). Seek is two binary searches,
 * O(log N); add and delete are a seek plus a move within one chunk of at most MAX_CHUNK
 * entries. Entries live in parallel arrays, so an entry costs two array slots, no object.
 */
export class SortedEntries {
  private readonly chunks: Chunk[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Index of the first chunk whose last entry is ≥ (key, id) (strictly > when `strict`), or chunks.length. */
  private chunkFor(key: SortKey, id: string, strict: boolean): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.chunks[mid] as Chunk;
      const last = c.keys.length - 1;
      const cmp = compareKeys(c.keys[last] as SortKey, key) || compareKeys(c.ids[last] as string, id);
      if (strict ? cmp > 0 : cmp >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Offset in `chunk` of the first entry ≥ (key, id) (strictly > when `strict`). */
  private offsetIn(chunk: Chunk, key: SortKey, id: string, strict: boolean): number {
    let lo = 0;
    let hi = chunk.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const cmp = compareKeys(chunk.keys[mid] as SortKey, key) || compareKeys(chunk.ids[mid] as string, id);
      if (strict ? cmp > 0 : cmp >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Adds (key, id); false when that exact pair is already there. */
  add(key: SortKey, id: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push({ keys: [key], ids: [id] });
      this.count = 1;
      return true;
    }
    let ci = this.chunks.length - 1;
    let chunk = this.chunks[ci] as Chunk;
    let at = chunk.keys.length;
    // Past the last entry (an index built in order, as after a start) needs no search.
    if ((compareKeys(chunk.keys[at - 1] as SortKey, key) || compareKeys(chunk.ids[at - 1] as string, id)) >= 0) {
      ci = Math.min(this.chunkFor(key, id, false), this.chunks.length - 1);
      chunk = this.chunks[ci] as Chunk;
      at = this.offsetIn(chunk, key, id, false);
    }
    if (at < chunk.keys.length && compareKeys(chunk.keys[at] as SortKey, key) === 0 && chunk.ids[at] === id)
      return false;
    if (at === chunk.keys.length) {
      chunk.keys.push(key);
      chunk.ids.push(id);
    } else {
      chunk.keys.splice(at, 0, key);
      chunk.ids.splice(at, 0, id);
    }
    this.count++;
    if (chunk.keys.length > MAX_CHUNK) {
      // Appending past the end (an index built in order) leaves the full chunk full; otherwise
      // halves. Both halves are fresh arrays of their exact length: splice would leave the first
      // one's backing store at its old size, half of it unused for good once it stops growing.
      const cut = ci === this.chunks.length - 1 && at === chunk.keys.length - 1 ? MAX_CHUNK : chunk.keys.length >>> 1;
      const rest = { keys: chunk.keys.slice(cut), ids: chunk.ids.slice(cut) };
      chunk.keys = chunk.keys.slice(0, cut);
      chunk.ids = chunk.ids.slice(0, cut);
      this.chunks.splice(ci + 1, 0, rest);
    }
    return true;
  }

  /** Removes (key, id); false when it was not there. */
  delete(key: SortKey, id: string): boolean {
    const ci = this.chunkFor(key, id, false);
    const chunk = this.chunks[ci];
    if (!chunk) return false;
    const at = this.offsetIn(chunk, key, id, false);
    if (at >= chunk.keys.length || compareKeys(chunk.keys[at] as SortKey, key) !== 0 || chunk.ids[at] !== id)
      return false;
    chunk.keys.splice(at, 1);
    chunk.ids.splice(at, 1);
    this.count--;
    if (chunk.keys.length === 0) this.chunks.splice(ci, 1);
    else if (chunk.keys.length < MIN_CHUNK) this.mergeWithNext(ci);
    return true;
  }

  /**
   * Removes every (key, id) of `removed` and then adds every one of `added` (each by id, ids unique within each): the
   * same set as a delete then an add per entry. Many changes at once (a fold's view changes applied together) are
   * sorted and merged into the chunks in one walk: a chunk no change falls in is kept as it is, one that some do is
   * rebuilt once, instead of a seek and a move per change.
   */
  replaceMany(removed: ReadonlyMap<string, SortKey>, added: ReadonlyMap<string, SortKey>): void {
    if ((removed.size + added.size) * REBUILD_RATIO < this.count || this.chunks.length === 0) {
      for (const [id, key] of removed) this.delete(key, id);
      for (const [id, key] of added) this.add(key, id);
      return;
    }
    const byEntry = (x: readonly [string, SortKey], y: readonly [string, SortKey]) =>
      compareKeys(x[1], y[1]) || compareKeys(x[0], y[0]);
    const dels = [...removed].sort(byEntry);
    const adds = [...added].sort(byEntry);
    const out: Chunk[] = [];
    let r = 0;
    let a = 0;
    let count = 0;
    for (let ci = 0; ci < this.chunks.length; ci++) {
      const c = this.chunks[ci] as Chunk;
      const n = c.keys.length;
      const lastKey = c.keys[n - 1] as SortKey;
      const lastId = c.ids[n - 1] as string;
      const last = ci === this.chunks.length - 1;
      // The changes up to this chunk's last entry fall in it; every add past the end falls in the last one.
      const upTo = (entries: readonly (readonly [string, SortKey])[], i: number): number => {
        let j = i;
        for (; j < entries.length; j++) {
          const [id, key] = entries[j] as [string, SortKey];
          if ((compareKeys(key, lastKey) || compareKeys(id, lastId)) > 0) break;
        }
        return j;
      };
      const r2 = upTo(dels, r);
      const a2 = last ? adds.length : upTo(adds, a);
      if (r2 === r && a2 === a) {
        out.push(c);
        count += n;
        continue;
      }
      // Each change found by a binary search in the chunk, the entries between them copied without comparing.
      const gone: number[] = [];
      for (; r < r2; r++) {
        const [id, key] = dels[r] as [string, SortKey];
        const at = this.offsetIn(c, key, id, false);
        if (at < n && c.ids[at] === id && compareKeys(c.keys[at] as SortKey, key) === 0) gone.push(at);
      }
      const keys: SortKey[] = [];
      const ids: string[] = [];
      let from = 0;
      let g = 0;
      const copyTo = (to: number) => {
        for (; from < to; from++) {
          if (g < gone.length && gone[g] === from) {
            g++;
            continue;
          }
          keys.push(c.keys[from] as SortKey);
          ids.push(c.ids[from] as string);
        }
      };
      for (; a < a2; a++) {
        const [id, key] = adds[a] as [string, SortKey];
        const at = this.offsetIn(c, key, id, false);
        copyTo(at);
        // The exact pair kept already (not removed): add leaves it there once.
        if (at < n && c.ids[at] === id && compareKeys(c.keys[at] as SortKey, key) === 0 && gone[g] !== at) continue;
        keys.push(key);
        ids.push(id);
      }
      copyTo(n);
      r = r2;
      count += keys.length;
      // At most MAX_CHUNK a chunk, as add leaves them; an emptied one goes.
      const pieces = Math.ceil(keys.length / MAX_CHUNK);
      const size = Math.ceil(keys.length / Math.max(1, pieces));
      for (let at = 0; at < keys.length; at += size)
        out.push({ keys: keys.slice(at, at + size), ids: ids.slice(at, at + size) });
    }
    this.chunks.length = 0;
    for (const c of out) this.chunks.push(c);
    this.count = count;
  }

  /** Keeps chunks from thinning out after many deletes, so seeks stay O(log N) of the live entries. */
  private mergeWithNext(ci: number): void {
    const chunk = this.chunks[ci] as Chunk;
    const next = this.chunks[ci + 1];
    if (!next || chunk.keys.length + next.keys.length > MAX_CHUNK) return;
    chunk.keys.push(...next.keys);
    chunk.ids.push(...next.ids);
    this.chunks.splice(ci + 1, 1);
  }

  /**
   * A cursor on the entry where an ascending walk starts: the first entry > (key, id) when
   * `strict`, else ≥; or, for a descending walk (`descending`), the last entry < (key, id)
   * (≤ unless `strict`). Without a key, the first (or last) entry.
   */
  seek(
    descending: boolean,
    from?: { readonly key: SortKey; readonly id: string; readonly strict: boolean },
    cursorKey?: SortKey,
  ): SortedCursor {
    const cursor = new SortedCursor(this.chunks, descending, cursorKey);
    if (from === undefined) {
      if (descending)
        cursor.moveTo(this.chunks.length - 1, (this.chunks[this.chunks.length - 1]?.keys.length ?? 0) - 1);
      else cursor.moveTo(0, 0);
      return cursor;
    }
    // Ascending from "> x" and descending from "≤ x" both split at the first entry > x; the others at the first ≥ x.
    const splitStrict = descending ? !from.strict : from.strict;
    const ci = this.chunkFor(from.key, from.id, splitStrict);
    const chunk = this.chunks[ci];
    const at = chunk ? this.offsetIn(chunk, from.key, from.id, splitStrict) : 0;
    if (!descending) cursor.moveTo(ci, at);
    else if (at > 0) cursor.moveTo(ci, at - 1);
    else cursor.moveTo(ci - 1, (this.chunks[ci - 1]?.keys.length ?? 0) - 1);
    return cursor;
  }

  /** Every entry in order (tests and diagnostics). */
  *entries(): IterableIterator<[SortKey, string]> {
    for (const c of this.chunks)
      for (let i = 0; i < c.keys.length; i++) yield [c.keys[i] as SortKey, c.ids[i] as string];
  }
}

/**
 * A position in a SortedEntries; valid until the set changes (callers walk it synchronously).
 * With a `fixedKey`, it shows that key for every entry instead of the stored one (an order whose
 * key every entry of the set shares, walked over another order's set).
 */
export class SortedCursor {
  private ci = 0;
  private off = 0;
  key: SortKey = "";
  id = "";
  done = true;

  constructor(
    private readonly chunks: readonly Chunk[],
    private readonly descending: boolean,
    private readonly fixedKey?: SortKey,
  ) {}

  /** A cursor on no entry. */
  static empty(descending: boolean): SortedCursor {
    return new SortedCursor([], descending);
  }

  moveTo(ci: number, off: number): void {
    let c = ci;
    let o = off;
    // Normalise an offset past either end of its chunk onto the neighbouring chunk.
    if (!this.descending && c >= 0 && c < this.chunks.length && o >= (this.chunks[c] as Chunk).keys.length) {
      c++;
      o = 0;
    }
    if (this.descending && o < 0) {
      c--;
      o = (this.chunks[c]?.keys.length ?? 0) - 1;
    }
    const chunk = this.chunks[c];
    if (!chunk || o < 0 || o >= chunk.keys.length) {
      this.done = true;
      return;
    }
    this.ci = c;
    this.off = o;
    this.key = this.fixedKey ?? (chunk.keys[o] as SortKey);
    this.id = chunk.ids[o] as string;
    this.done = false;
  }

  next(): void {
    if (this.done) return;
    this.moveTo(this.ci, this.descending ? this.off - 1 : this.off + 1);
  }
}
