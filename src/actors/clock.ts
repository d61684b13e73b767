export type TimerHandle = { readonly cancel: () => void };

/** Time and timers, supplied to the actor host so tests can fake them (and nothing else). */
export interface Clock {
  now(): number;
  setTimer(delayMs: number, fn: () => void): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};
