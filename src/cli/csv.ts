import { printable } from "./printable.ts";

/** RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled. */
function field(text: string): string {
  const safe = printable(text, { multiline: true });
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/**
 * Rows as CSV (RFC 4180 quoting), lines ending in LF as Go's encoding/csv writes them. Cells from the API keep their
 * line breaks (quoted) but no other control character reaches the terminal raw.
 */
export function formatCsv(header: readonly string[] | undefined, rows: readonly (readonly string[])[]): string {
  return [...(header === undefined ? [] : [header]), ...rows].map((r) => r.map(field).join(",")).join("\n");
}
