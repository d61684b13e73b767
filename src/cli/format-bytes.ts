/**
 * A size in binary units as the CLI and the web console both show it: one decimal under 10 of a unit, whole above.
 * No Node here: ui/ imports it, so that the two never round one size two ways.
 */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 10 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}
