import type { Column } from "./column.ts";
import type { OutputOptions } from "./output-options.ts";
import { print, printData, printError, printRendered } from "./output-format.ts";
import { renderRows } from "./render-rows.ts";

/**
 * One page of a list command: a table with the hint for the next page (`more`, when there is one) under it, or CSV,
 * JSON or YAML (`data`, the items unless the command prints more) with the hint on stderr, so that stdout stays one
 * document. Bacalhau prints the list itself there.
 */
export async function printPage<T>(
  output: OutputOptions<string>,
  columns: readonly Column<T>[],
  items: readonly T[],
  more: string | undefined,
  data: unknown = items,
): Promise<void> {
  if (output.format === "table" || output.format === "csv") {
    const text = renderRows(columns, items, output);
    if (text !== "") printRendered(text);
    if (more && output.format === "table") print(`\n${more}`);
    else if (more) printError(more);
  } else {
    await printData(output.format === "yaml" ? "yaml" : "json", data);
    if (more) printError(more);
  }
}
