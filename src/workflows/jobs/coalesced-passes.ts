/**
 * Passes over every job (the Queued jobs placed again), one at a time: a request made while a pass is queued and not
 * started joins that pass (merged into its request), since the pass reads the state as it is when it starts. However
 * many requests arrive while one pass runs, at most one more pass follows it.
 */
export class CoalescedPasses<R> {
  private last: Promise<void> = Promise.resolve();
  private waiting: { request: R; readonly done: Promise<void> } | undefined;

  constructor(
    private readonly pass: (request: R) => Promise<void>,
    private readonly merge: (queued: R, joining: R) => R,
  ) {}

  /** Resolves once a pass that started after this call has ended; rejects with that pass's failure. */
  request(request: R): Promise<void> {
    const waiting = this.waiting;
    if (waiting !== undefined) {
      waiting.request = this.merge(waiting.request, request);
      return waiting.done;
    }
    const entry: { request: R; done: Promise<void> } = { request, done: Promise.resolve() };
    entry.done = this.last.then(() => {
      this.waiting = undefined;
      return this.pass(entry.request);
    });
    this.waiting = entry;
    this.last = entry.done.then(
      () => undefined,
      () => undefined,
    );
    return entry.done;
  }
}
