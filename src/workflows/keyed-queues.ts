/**
 * Work per key, one after another within a key and concurrently across keys: a job's placement, approval, settle and
 * cancel see what the one before them appended, two sends of one execution see each other's chain, and one key's work
 * never holds up another's. A key's entry is dropped once its queue is idle, so the map holds only the keys with work
 * under way.
 *
 * Work on an idle key starts within the `run` call, not a microtask later: the common case (nothing queued) pays no
 * extra turn, and a work that begins by waiting for another queue's `settled` (the job runner's node work waits so for
 * its jobs' work) waits for exactly what that queue held when `run` was called. The key's turn is taken before the
 * work starts, so a `run` for the same key from the work's synchronous part waits behind it rather than overtaking
 * it, and a work that throws before its first await is a rejection like any other.
 */
export class KeyedQueues {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after everything queued for `key` before it has ended (a failure included). */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    let ended = (): void => {};
    const tail = new Promise<void>((resolve) => (ended = resolve));
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    const result = before === undefined ? started(work) : before.then(work);
    void result.then(ended, ended);
    return result;
  }

  /**
   * Resolves once the work of every key queued before this call has ended (what is queued later is not waited for).
   * For another queue's work to wait on (a work of this one would wait for itself).
   */
  async settled(): Promise<void> {
    await Promise.all(this.tails.values());
  }

  /** How many keys have work queued or under way. */
  get size(): number {
    return this.tails.size;
  }
}

function started<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (err: unknown) {
    return Promise.reject(err);
  }
}
