/**
 * Work per job, one after another within a job and concurrently across jobs: a job's placement, approval, settle and
 * cancel see what the one before them appended, and one job's appends never hold up another's. A job's entry is
 * dropped once its queue is idle, so the map holds only the jobs with work under way.
 */
export class JobQueues {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after everything queued for `jobId` before it has ended (a failure included). */
  run<T>(jobId: string, work: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(jobId) ?? Promise.resolve()).then(work);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(jobId, tail);
    void tail.then(() => {
      if (this.tails.get(jobId) === tail) this.tails.delete(jobId);
    });
    return next;
  }

  /** Resolves once the work of every job queued before this call has ended (what is queued later is not waited for). */
  async settled(): Promise<void> {
    await Promise.all(this.tails.values());
  }

  /** How many jobs have work queued or under way. */
  get size(): number {
    return this.tails.size;
  }
}
