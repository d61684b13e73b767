/** How often a page may be read again while something keeps asking. */
export interface CoalescePacing {
  /** From the first request to the read: what else arrives meanwhile rides along (a drain stops many executions). */
  readonly delayMs: number;
  /** At least this long from one read's start to the next: a burst of 10,000 events is a read a second, not 10,000. */
  readonly intervalMs: number;
}

export const LIVE_PACING: CoalescePacing = { delayMs: 200, intervalMs: 1000 };

/**
 * Runs `refresh` once for any number of requests: the first after `delayMs`, then no sooner than `intervalMs` after
 * the previous one started, and never while the previous one is still under way (a slow read is not piled on). A
 * request made during a read is served by one more read after it, so nothing asked for is missed.
 */
export function coalescedRefresh(refresh: () => unknown, pacing: CoalescePacing = LIVE_PACING) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let wanted = false;
  let stopped = false;
  let lastStart = Number.NEGATIVE_INFINITY;

  const schedule = () => {
    if (stopped || running || timer !== undefined || !wanted) return;
    const wait = Math.max(pacing.delayMs, lastStart + pacing.intervalMs - performance.now());
    timer = setTimeout(() => {
      timer = undefined;
      wanted = false;
      running = true;
      lastStart = performance.now();
      void Promise.resolve()
        .then(refresh)
        .catch(() => undefined) // The page shows its own errors; the pacing goes on.
        .finally(() => {
          running = false;
          schedule();
        });
    }, wait);
  };

  return {
    request: () => {
      wanted = true;
      schedule();
    },
    stop: () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
