/**
 * `work`'s outcome, calling `report(elapsedMs)` every `everyMs` while it is still pending, so a wait that does not end
 * (start-up on a NATS or store that does not answer) says where it waits instead of hanging silently. Real time on
 * purpose: it watches the process itself, before the deadline heap runs and whatever its clock does.
 */
export async function reportWhilePending<T>(
  work: Promise<T>,
  everyMs: number,
  report: (elapsedMs: number) => void,
): Promise<T> {
  const started = performance.now();
  const timer = setInterval(() => report(Math.round(performance.now() - started)), everyMs);
  // Nothing to keep the process up for: the work's own sockets and timers do that.
  timer.unref();
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
