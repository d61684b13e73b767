export type TimerHandle = { readonly cancel: () => void };

/** Time and timers, supplied to the actor host so tests can fake them (and nothing else). */
export interface Clock {
  now(): number;
  setTimer(delayMs: number, fn: () => void): TimerHandle;
}

/**
 * The longest delay Node's setTimeout takes (about 24.8 days); a longer one fires at once. A
 * deadline that far off (a job's TotalTimeout of a month) is waited for in such steps: the
 * deadline scheduler finds nothing due yet and arms the timer again.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    const t = setTimeout(fn, Math.min(MAX_TIMER_MS, Math.max(0, delayMs)));
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};
