/**
 * `work`'s outcome if it settles within `ms`, else `{ ok: false }` (the work is not cancelled;
 * its late result is dropped). A rejection of `work` within the time is passed on.
 */
export function within<T>(work: Promise<T>, ms: number): Promise<{ ok: true; value: T } | { ok: false }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve({ ok: false }), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve({ ok: true, value });
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
