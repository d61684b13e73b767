import { print, printData, printError, type OutputFormat } from "./output-format.ts";
import { formatTable } from "./table.ts";

/**
 * One page of a list command: a table with the hint for the next page (`more`, when there is one)
 * under it, or the items themselves in JSON or YAML. Bacalhau prints the list itself there; the
 * hint goes to stderr so that stdout stays one document.
 */
export async function printPage<T>(
  format: OutputFormat,
  columns: readonly string[],
  items: readonly T[],
  row: (item: T) => string[],
  more: string | undefined,
): Promise<void> {
  if (format === "table") {
    print(formatTable(columns, items.map(row)));
    if (more) print(`\n${more}`);
  } else {
    await printData(format, items);
    if (more) printError(more);
  }
}
