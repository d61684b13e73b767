import type { CellFormat, Column } from "./column.ts";
import { formatCsv } from "./csv.ts";
import { localTime, machineTime } from "./local-time.ts";
import type { OutputOptions } from "./output-options.ts";
import { formatTable } from "./table.ts";

/** The columns this output shows: the wide ones only in wide output. */
export const shownColumns = <T>(columns: readonly Column<T>[], wide: boolean): Column<T>[] =>
  columns.filter((c) => wide || c.wide !== true);

type RowOptions = Pick<OutputOptions<string>, "format" | "wide">;

/** One item's cells as the format writes them: instants local in a table, RFC 3339 UTC in CSV. */
export function rowTexts<T>(shown: readonly Column<T>[], item: T, options: RowOptions): string[] {
  const csv = options.format === "csv";
  const format: CellFormat = { full: csv || options.wide, time: csv ? machineTime : localTime };
  return shown.map((c) => {
    const cell = c.cell(item, format);
    return cell instanceof Date ? format.time(cell) : (cell ?? "");
  });
}

/**
 * Items as a table or as CSV, through the command's columns: every instant in one format, local and readable in a
 * table, RFC 3339 UTC in CSV; CSV has whole values, as wide output does.
 */
export function renderRows<T>(
  columns: readonly Column<T>[],
  items: readonly T[],
  options: Pick<OutputOptions<string>, "format" | "wide" | "style" | "header">,
): string {
  const shown = shownColumns(columns, options.wide);
  const rows = items.map((item) => rowTexts(shown, item, options));
  const header = shown.map((c) => c.header);
  if (options.format === "csv") return formatCsv(options.header ? header : undefined, rows);
  return formatTable(header, rows, options);
}
