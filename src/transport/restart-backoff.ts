export interface RestartBackoffOptions {
  /** Delay before the first restart after a crash. */
  readonly initialMs: number;
  /** Delays double up to this. */
  readonly maxMs: number;
  /** A process that stayed up this long was healthy: its next crash starts again at initialMs. */
  readonly stableAfterMs: number;
}

export const DEFAULT_RESTART_BACKOFF: RestartBackoffOptions = { initialMs: 250, maxMs: 10_000, stableAfterMs: 60_000 };

/**
 * Restart delays for a supervised process: quick after a one-off crash, slower while it keeps
 * crashing (so a crash loop does not spin a core), quick again once it has stayed up a while.
 */
export class RestartBackoff {
  private failures = 0;

  constructor(private readonly options: RestartBackoffOptions = DEFAULT_RESTART_BACKOFF) {}

  /** The delay before the next start, given how long the process ran before it failed (0 if it never became ready). */
  next(uptimeMs: number): number {
    if (uptimeMs >= this.options.stableAfterMs) this.failures = 0;
    const delay = Math.min(this.options.initialMs * 2 ** this.failures, this.options.maxMs);
    this.failures++;
    return delay;
  }
}
