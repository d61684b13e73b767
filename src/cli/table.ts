import { printable } from "./printable.ts";

/**
 * Left-aligned columns separated by two spaces, as `bacalhau node list` prints. Cells come from
 * the API, so each is made printable (and kept on one line) before the columns are measured.
 */
export function formatTable(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((r) => r.map((c) => printable(c)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

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
