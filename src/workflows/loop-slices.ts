/**
 * Shares the event loop between CPU-bound work that comes in bursts (placements: each a synchronous evaluation of the
 * fleet) and everything else the orchestrator serves on it (heartbeats, node reports, HTTP requests, commits). Work
 * handed to `run` goes back to back for one slice of `sliceMs`; what is left waits for a later turn of the event loop,
 * where a new slice begins, in the order it came. Without it, a commit acknowledging dozens of appends at once resumes
 * dozens of placements in one drain of the microtask queue, and at 10,000 nodes that kept the loop from I/O for
 * seconds.
 *
 * The work is a synchronous function, run inside the slice: its cost is known when it returns, where an awaited
 * continuation's is not (it runs after every continuation queued before it has checked the clock). Measured with the
 * real clock on purpose: a slice is a share of this process's time, not of the cluster's.
 */
export class LoopSlices {
  private sliceStartedAt = Number.NEGATIVE_INFINITY;
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  constructor(
    private readonly sliceMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `work` now if the current slice lasts and nothing waits; else in a later turn of the event loop. */
  run<T>(work: () => T): Promise<T> {
    if (this.waiting.length === 0 && !this.spent()) {
      try {
        return Promise.resolve(work());
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(() => {
        try {
          resolve(work());
        } catch (err) {
          reject(err as Error);
        }
      });
      this.schedule();
    });
  }

  private spent(): boolean {
    return this.now() - this.sliceStartedAt > this.sliceMs;
  }

  /** setImmediate from within a check-phase callback runs in the next turn: I/O is polled in between. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.sliceStartedAt = this.now();
      while (this.waiting.length > 0 && !this.spent()) (this.waiting.shift() as () => void)();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}
