export interface TokenBucketOptions {
  /** Tokens added per second, sustained. */
  readonly ratePerSecond: number;
  /** Most tokens held at once: how many may pass together after a quiet spell. At least 1. */
  readonly burst: number;
}

export type Take = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

const MILLI = 1000;

/**
 * A token bucket refilled lazily from the clock: O(1) per take and no timer. Starts full.
 * Counts thousandths of a token, so that whole rates and millisecond clocks stay exact.
 */
export class TokenBucket {
  private milliTokens: number;
  private last: number;

  constructor(
    private readonly options: TokenBucketOptions,
    private readonly clock: { now(): number },
  ) {
    if (!(options.ratePerSecond > 0) || !(options.burst >= 1)) {
      throw new RangeError(
        `a token bucket needs a positive rate and a burst of at least 1, got ${options.ratePerSecond}/s and ${options.burst}`,
      );
    }
    this.milliTokens = options.burst * MILLI;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    // A clock stepped backwards adds nothing rather than a negative amount.
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.milliTokens = Math.min(this.options.burst * MILLI, this.milliTokens + elapsed * this.options.ratePerSecond);
  }

  /**
   * Takes `cost` tokens (one by default; never more than the burst, or it could never pass), or says how long until
   * they will be there. A cost of 1/share makes the bucket pass `share` of its rate and burst.
   */
  take(cost = 1): Take {
    this.refill();
    const need = Math.round(Math.min(Math.max(cost, 0), this.options.burst) * MILLI);
    if (this.milliTokens >= need) {
      this.milliTokens -= need;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil((need - this.milliTokens) / this.options.ratePerSecond) };
  }
}
