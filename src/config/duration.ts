/** Go-style durations ("15s", "1m30s", "500ms"), as Bacalhau's config uses. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;

export function parseDuration(text: string): number | undefined {
  const input = text.trim();
  if (input === "") return undefined;
  if (/^\d+$/.test(input)) return undefined; // a bare number is ambiguous; demand a unit
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < input.length) {
    const start = PART.lastIndex;
    const m = PART.exec(input);
    if (!m || m.index !== start) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
