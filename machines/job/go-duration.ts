/**
 * A whole number of seconds as Go's time.Duration.String() writes it (`30m0s`, `1h0m0s`, `10s`):
 * Bacalhau's messages name timeouts this way, and Shoal's say the same.
 */
export function goDuration(seconds: number): string {
  if (seconds === 0) return "0s";
  const sign = seconds < 0 ? "-" : "";
  const total = Math.abs(Math.trunc(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}
