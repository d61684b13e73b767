import { UsageError } from "./usage-error.ts";

/** A whole-number flag's value, within bounds; anything else is a usage error naming the flag. */
export function wholeNumberFlag(
  text: string,
  flag: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  help?: string,
): number {
  const value = /^\d{1,16}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(
      `${flag} must be a whole number${max === Number.MAX_SAFE_INTEGER ? ` of at least ${min}` : ` from ${min} to ${max}`}, got ${JSON.stringify(text)}`,
      help,
    );
  }
  return value;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 };

/**
 * Seconds, as Bacalhau's `--timeout 300` takes them, or a duration such as `90s`, `5m`, `1h30m`
 * (Go's units s, m, h; whole seconds in total).
 */
export function secondsFlag(text: string, flag: string, help?: string): number {
  const trimmed = text.trim();
  if (/^\d{1,12}$/.test(trimmed)) return Number(trimmed);
  if (/^(\d{1,9}[hms])+$/.test(trimmed)) {
    let total = 0;
    for (const [, n, unit] of trimmed.matchAll(/(\d+)([hms])/g))
      total += Number(n) * (UNIT_SECONDS[unit as string] as number);
    return total;
  }
  throw new UsageError(
    `${flag} must be whole seconds (300) or a duration such as 90s, 5m or 1h30m, got ${JSON.stringify(text)}`,
    help,
  );
}

/** Seconds as Go prints a duration (`10m0s`, `1h0m0s`, `45s`), as Bacalhau's messages show them. */
export function formatSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
