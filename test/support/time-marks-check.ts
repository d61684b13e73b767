import Database from "better-sqlite3";

/**
 * The time marks and the largest skew a store file should hold, worked out again from its events
 * table alone (a mark at the first event of each block of 256 positions, once some time has
 * parsed, holding the largest time up to it), beside what the file holds.
 */
export function timeMarksOf(file: string): {
  stored: { marks: [number, number][]; skew: number };
  expected: { marks: [number, number][]; skew: number };
} {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT position, time FROM events ORDER BY position").raw().all() as [number, string][];
    const marks: [number, number][] = [];
    let max = -Infinity;
    let skew = 0;
    let block = -1;
    for (const [position, time] of rows) {
      const t = new Date(time).getTime();
      if (!Number.isNaN(t)) {
        skew = Math.max(skew, max - t);
        max = Math.max(max, t);
      }
      if (Math.floor(position / 256) > block) {
        block = Math.floor(position / 256);
        if (max !== -Infinity) marks.push([position, max]);
      }
    }
    const stored = db.prepare("SELECT position, max_time_ms FROM time_marks ORDER BY position").raw().all() as [
      number,
      number,
    ][];
    const storedSkew =
      (db.prepare("SELECT value FROM store_meta WHERE name = 'max_time_skew_ms'").pluck().get() as
        number | undefined) ?? 0;
    return { stored: { marks: stored, skew: storedSkew }, expected: { marks, skew } };
  } finally {
    db.close();
  }
}
