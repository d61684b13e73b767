/**
 * Turns to read the store, for event stream clients catching up (docs/audit.md, The event stream): at most `limit`
 * at once, the others in line in the order they asked, so that many clients reconnecting after a restart read the
 * store, and hold a page on their connections, a few at a time. A client keeps its turn until it is live, unless its
 * connection is slow to take a page: then it gives the turn to the next and takes its place in line again.
 */
export class CatchUpTurns {
  private running = 0;
  private line: (() => void)[] = [];
  /** line[first] is the next to go (entries before it are gone). */
  private first = 0;

  /** `limit` Infinity: no line, every client goes at once. */
  constructor(readonly limit: number) {
    if (!(limit >= 1) || (limit !== Infinity && !Number.isSafeInteger(limit)))
      throw new Error(`catch-up turns: ${limit} is not a whole number at least 1`);
  }

  /** Turns taken now. */
  get taken(): number {
    return this.running;
  }

  /** Clients waiting for a turn. */
  get waiting(): number {
    return this.line.length - this.first;
  }

  /** Resolves once the caller holds a turn; it must give it back with release(). */
  take(): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.line.push(resolve));
  }

  /** Gives a turn back: the next in line takes it. */
  release(): void {
    if (this.first < this.line.length) {
      const next = this.line[this.first] as () => void;
      this.first++;
      if (this.first === this.line.length) {
        this.line = [];
        this.first = 0;
      } else if (this.first > 1024 && this.first * 2 > this.line.length) {
        this.line = this.line.slice(this.first);
        this.first = 0;
      }
      next();
      return;
    }
    this.running--;
  }
}
