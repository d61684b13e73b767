import { UsageError } from "./usage-error.ts";

/** What a listing or describing command prints: `-o wide` is the table with its wide columns. */
export const LIST_FORMATS = ["table", "wide", "json", "yaml", "csv"] as const;

export type ListFormat = "table" | "csv" | "json" | "yaml";

/** `-o/--output` and Bacalhau's output flags, for a command's parseArgs options. */
export const OUTPUT_OPTIONS = {
  output: { type: "string", short: "o" },
  wide: { type: "boolean" },
  "no-style": { type: "boolean" },
  "hide-header": { type: "boolean" },
} as const;

export interface OutputValues {
  readonly output?: string | undefined;
  readonly wide?: boolean | undefined;
  readonly "no-style"?: boolean | undefined;
  readonly "hide-header"?: boolean | undefined;
}

export interface OutputOptions<F extends string = ListFormat> {
  readonly format: F;
  /** The wide columns, and whole values (ids not shortened). */
  readonly wide: boolean;
  /** Borders and a bold header: on a terminal, unless --no-style. */
  readonly style: boolean;
  readonly header: boolean;
}

interface OutputSpec<E extends string> {
  /** The format without -o (describe commands print yaml). */
  readonly fallback: "table" | "yaml";
  readonly help: string;
  /** Formats of this command beyond LIST_FORMATS (events: ndjson). */
  readonly extra?: readonly E[];
  /** LIST_FORMATS this command has no use for (job describe has no rows for csv). */
  readonly without?: readonly (typeof LIST_FORMATS)[number][];
}

const TABLE_FLAGS = ["wide", "no-style", "hide-header"] as const;

/**
 * The output flags, checked: an unknown format, or a table flag given with json or yaml, is a usage error naming
 * what is valid. `--wide` is `-o wide` (and csv with the wide columns).
 */
export function outputOptions<E extends string = never>(
  values: OutputValues,
  spec: OutputSpec<E>,
): OutputOptions<ListFormat | E> {
  const formats: string[] = [...LIST_FORMATS.filter((f) => !spec.without?.includes(f)), ...(spec.extra ?? [])];
  // A table flag without -o asks for a table, even of a command that prints yaml by default.
  const given = values.output ?? (TABLE_FLAGS.some((flag) => values[flag]) ? "table" : spec.fallback);
  if (!formats.includes(given))
    throw new UsageError(
      `--output must be ${formats.slice(0, -1).join(", ")} or ${formats.at(-1)}, got ${given}`,
      spec.help,
    );
  const format = (given === "wide" ? "table" : given) as ListFormat | E;
  if (format !== "table" && format !== "csv")
    for (const flag of TABLE_FLAGS)
      if (values[flag]) throw new UsageError(`--${flag} shapes table and csv output, not ${format}`, spec.help);
  return {
    format,
    wide: given === "wide" || values.wide === true,
    style: format === "table" && values["no-style"] !== true && process.stdout.isTTY === true,
    header: values["hide-header"] !== true,
  };
}
