import { printableCell } from "./printable.ts";

export interface TableStyle {
  /** Box-drawing borders and a bold header (bold left out where NO_COLOR is set). */
  readonly style?: boolean;
  /** The header row; false leaves it out (--hide-header). */
  readonly header?: boolean;
}

const BOLD = "\u001b[1m";
const RESET = "\u001b[0m";

/**
 * Left-aligned columns separated by two spaces, as `bacalhau node list --no-style` prints (the plain table), or the
 * same columns in a box. Cells come from the API, so each is made printable (and kept on one line) before the columns
 * are measured; the only escapes in the result are the style's own.
 */
export function formatTable(
  header: readonly string[],
  cells: readonly (readonly string[])[],
  options: TableStyle = {},
): string {
  const rows = cells.map((r) => r.map(printableCell));
  const shown = options.header === false ? rows : [header, ...rows];
  const widths = header.map((_, i) => Math.max(0, ...shown.map((r) => (r[i] ?? "").length)));
  if (options.style !== true) {
    const line = (cells: readonly string[]) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd();
    return shown.map(line).join("\n");
  }
  const bold = process.env.NO_COLOR ? (text: string) => text : (text: string) => `${BOLD}${text}${RESET}`;
  const rule = (left: string, middle: string, right: string) =>
    left + widths.map((w) => "─".repeat(w + 2)).join(middle) + right;
  const line = (cells: readonly string[], emphasis = (text: string) => text) =>
    `│ ${widths.map((w, i) => emphasis((cells[i] ?? "").padEnd(w))).join(" │ ")} │`;
  return [
    rule("┌", "┬", "┐"),
    ...(options.header === false ? [] : [line(header, bold), rule("├", "┼", "┤")]),
    ...rows.map((r) => line(r)),
    rule("└", "┴", "┘"),
  ].join("\n");
}
