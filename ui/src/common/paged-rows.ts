/** One page as the API answered it: its items and the NextToken after them ("" at the end of the list). */
export interface RowsPage<T> {
  readonly items: readonly T[];
  readonly next: string;
}

/** A page read from `start` (the NextToken before it; "" for the first), and which generation of reads it is. */
interface Chunk<T> extends RowsPage<T> {
  readonly start: string;
  readonly generation: number;
}

/**
 * A long list read through the API's NextToken a page at a time, as a reader scrolls: the rows loaded so far, and
 * which of them are on screen. Everything loaded stays in memory (a node's JSON is about a kilobyte); only the
 * window is drawn (VirtualTable).
 *
 * When the list may have changed, `refresh` re-reads only the pages the window shows; the others are re-read when
 * they are shown again. The API's cursors name the last row of a page, so a page re-read from its own start stays in
 * place. When it now ends elsewhere (a row came or went), the pages after it began at the old end: the next one on
 * screen is re-read from the new end, and those below the window are dropped, to be read again on the way down.
 * Reads never overlap: a read that returns after the list was replaced (`stop`) changes nothing.
 */
export class PagedRows<T> {
  private chunks: Chunk<T>[] = [];
  /** Bumped by `refresh`: a chunk read before is out of date. */
  private generation = 0;
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  private window = { first: 0, last: 0 };
  private loadingMore = false;
  /** Every row loaded, in the list's order. */
  items: readonly T[] = [];
  /** Whether the first page has been read. */
  loaded = false;
  /** Why the latest read failed; undefined once one succeeds. */
  error: unknown = undefined;

  constructor(
    private readonly read: (start: string, limit: number) => Promise<RowsPage<T>>,
    private readonly pageSize: number,
    private readonly changed: () => void,
  ) {}

  /** Every row of the list is loaded (the last page read had no NextToken). */
  get complete(): boolean {
    return this.loaded && (this.chunks.at(-1)?.next ?? "") === "";
  }

  get loading(): boolean {
    return this.loadingMore;
  }

  /** The rows on screen: [first, last) of `items`. */
  show(first: number, last: number): void {
    this.window = { first, last };
  }

  /** Whether a row on screen was read before the latest `refresh`. */
  get staleShown(): boolean {
    return this.shownChunks().some((k) => this.chunks[k]!.generation < this.generation);
  }

  /** Reads the next page (the first, at the start); nothing when every row is loaded or a read is under way. */
  loadMore(): Promise<void> {
    if (this.complete || this.loadingMore) return this.queue;
    this.loadingMore = true;
    this.changed();
    return this.enqueue(async () => {
      try {
        const start = this.chunks.at(-1)?.next ?? "";
        if (this.loaded && start === "") return;
        const page = await this.read(start, this.pageSize);
        if (this.stopped) return;
        this.chunks.push({ ...page, start, generation: this.generation });
        this.loaded = true;
        this.error = undefined;
      } finally {
        this.loadingMore = false;
      }
    });
  }

  /** Everything loaded may be out of date: re-reads the pages on screen now (the first, if none was read yet). */
  refresh(): Promise<void> {
    this.generation++;
    return this.refreshShown();
  }

  /** Re-reads the pages on screen that were read before the latest `refresh`. */
  refreshShown(): Promise<void> {
    if (!this.loaded) return this.loadMore();
    return this.enqueue(async () => {
      const shown = this.shownChunks();
      if (shown.length === 0) return;
      const lastShown = shown[shown.length - 1]!;
      for (let k = shown[0]!; k <= lastShown && k < this.chunks.length; k++) {
        const old = this.chunks[k]!;
        if (old.generation >= this.generation) continue;
        const page = await this.read(old.start, this.pageSize);
        if (this.stopped) return;
        this.chunks[k] = { ...page, start: old.start, generation: this.generation };
        if (page.next === old.next) continue;
        // The pages after this one began at its old end.
        const following = this.chunks[k + 1];
        if (page.next !== "" && following !== undefined && k + 1 <= lastShown)
          this.chunks[k + 1] = { ...following, start: page.next, generation: -1 };
        else this.chunks.length = k + 1;
      }
      this.error = undefined;
    });
  }

  /** The list is no longer shown (its filters changed, the page closed): reads under way change nothing. */
  stop(): void {
    this.stopped = true;
  }

  /** Indexes of the chunks holding a row of the window. */
  private shownChunks(): number[] {
    const shown: number[] = [];
    let offset = 0;
    const { first, last } = this.window;
    for (let k = 0; k < this.chunks.length && offset <= last; k++) {
      const end = offset + this.chunks[k]!.items.length;
      // An empty page (a label selector's, cut at the scan budget) counts as shown when the window touches it.
      if (end === offset ? offset >= first && offset <= last : end > first && offset < last) shown.push(k);
      offset = end;
    }
    return shown;
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = async () => {
      try {
        await work();
      } catch (e) {
        if (!this.stopped) this.error = e;
      }
      if (this.stopped) return;
      this.items = this.chunks.flatMap((c) => c.items);
      this.changed();
    };
    this.queue = this.queue.then(run);
    return this.queue;
  }
}
