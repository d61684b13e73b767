import { printable } from "./printable.ts";
import { UsageError } from "./usage-error.ts";

export type OutputFormat = "table" | "json" | "yaml";

/** `--output`'s value, or the command's default; anything else is a usage error. */
export function outputFormat(value: string | undefined, fallback: OutputFormat, help?: string): OutputFormat {
  const format = value ?? fallback;
  if (format !== "table" && format !== "json" && format !== "yaml")
    throw new UsageError(`--output must be table, json or yaml, got ${format}`, help);
  return format;
}

/** Everything a command prints passes here: what the API returns is not trusted with the terminal. */
export function print(text: string): void {
  console.log(printable(text, { multiline: true }));
}

/**
 * A table or CSV that formatTable or formatCsv made: every cell from the API passed printable there, so the only
 * escapes left are the table style's own, which print would show as text.
 */
export function printRendered(text: string): void {
  console.log(text);
}

/** The same, on stderr (progress, warnings, errors). */
export function printError(text: string): void {
  console.error(printable(text, { multiline: true }));
}

export async function printData(format: "json" | "yaml", data: unknown): Promise<void> {
  // yaml is imported only when asked for: it costs ~50 ms of start-up.
  print(format === "json" ? JSON.stringify(data, null, 2) : (await import("yaml")).stringify(data).trimEnd());
}
