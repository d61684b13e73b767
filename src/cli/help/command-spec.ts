/** One option of a command, as its help, completion and the CLI reference show it. */
export interface OptionSpec {
  /** The long name without dashes: `output` for --output. */
  readonly name: string;
  readonly short?: string;
  /** The value's placeholder (FORMAT, N, FILE); absent for a flag. */
  readonly arg?: string;
  readonly description: string;
  /** A closed set of values, completed after the option. */
  readonly choices?: readonly string[];
}

/** A command of the tree: help, completion, suggestions and docs/cli.md are all made from it. */
export interface CommandSpec {
  readonly name: string;
  /** One line, shown in the parent's command list. */
  readonly summary: string;
  /** What follows `shoal <path>` on the usage line. */
  readonly usage: string;
  /** Paragraphs under the usage line; the summary when absent. */
  readonly description?: string;
  readonly options?: readonly OptionSpec[];
  /** The shared option groups it takes, shown as one pointer each. */
  readonly shared?: readonly SharedGroup[];
  readonly examples?: readonly string[];
  readonly subcommands?: readonly CommandSpec[];
}

export type SharedGroup = "api" | "config";
