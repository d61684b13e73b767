/** The longest delay Node's setTimeout takes (about 24.8 days): a longer one overflows and fires at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface DeadlineTimer {
  cancel(): void;
}

/**
 * Calls `fire` once the wall clock reaches `deadlineMs`, however far off: an execution may be given a month, and a
 * single setTimeout that long would fire within a millisecond (and kill a healthy container), so a far deadline is
 * waited for in steps, each checking the clock again.
 */
export function deadlineTimer(deadlineMs: number, fire: () => void): DeadlineTimer {
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = deadlineMs - Date.now();
    timer = setTimeout(left > MAX_DELAY_MS ? arm : fire, Math.min(MAX_DELAY_MS, Math.max(0, left)));
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}
