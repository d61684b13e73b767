import type { CommandSpec, OptionSpec } from "./command-spec.ts";
import { HELP_OPTION, commandLine, optionSpellings } from "./find-command.ts";
import { SHARED_GROUPS } from "./shared-options.ts";

const COLUMN = 27;

/** `-o, --output FORMAT`; `-c Key=Value` for the one option whose long name is its short one. */
export function optionLabel(option: OptionSpec): string {
  const names = optionSpellings(option).reverse().join(", ");
  if (option.arg === undefined) return names;
  return option.arg.startsWith("[") ? `${names}${option.arg}` : `${names} ${option.arg}`;
}

/** Two columns; a label too wide for the first puts its text on the next line. */
export function twoColumns(rows: readonly (readonly [string, string])[]): string {
  return rows
    .map(([left, text]) => [left, text.replaceAll("\n", `\n${" ".repeat(COLUMN)}`)] as const)
    .map(([left, right]) =>
      left.length + 2 < COLUMN ? `  ${left.padEnd(COLUMN - 2)}${right}` : `  ${left}\n${" ".repeat(COLUMN)}${right}`,
    )
    .join("\n");
}

/** The help of the command at the end of `path` (from the root), as `--help` prints it. */
export function helpText(path: readonly CommandSpec[]): string {
  const spec = path.at(-1)!;
  const line = commandLine(path);
  const parts = [`Usage: ${line} ${spec.usage}`, spec.description ?? capitalised(spec.summary)];
  if (spec.subcommands?.length)
    parts.push(`Commands:\n${twoColumns(spec.subcommands.map((s) => [s.name, s.summary]))}`);
  const options = [...(spec.options ?? []), HELP_OPTION];
  parts.push(`Options:\n${twoColumns(options.map(optionRow))}`);
  const shared = spec.shared ?? [];
  if (path.length === 1) for (const group of ["api", "config"] as const) parts.push(groupSection(group));
  else if (shared.length)
    parts.push(shared.map((g) => wrapped(`${SHARED_GROUPS[g].title} (shoal --help): ${groupNames(g)}`)).join("\n"));
  if (spec.subcommands?.length) parts.push(`Run '${line} <command> --help' for a command's options.`);
  if (spec.examples?.length) parts.push(`Examples:\n${spec.examples.map((e) => `  ${e}`).join("\n")}`);
  return parts.join("\n\n");
}

function optionRow(option: OptionSpec): [string, string] {
  return [optionLabel(option), option.description];
}

const groupNames = (group: keyof typeof SHARED_GROUPS): string =>
  SHARED_GROUPS[group].options.map((o) => optionLabel(o).split(" ")[0]).join(", ");

function groupSection(group: keyof typeof SHARED_GROUPS): string {
  const { title, options } = SHARED_GROUPS[group];
  return `${title} (the commands that take them):\n${twoColumns(options.map(optionRow))}`;
}

/** Words to lines of at most 100 characters, the later ones indented. */
function wrapped(text: string): string {
  const lines = [""];
  for (const word of text.split(" "))
    if (lines.at(-1)!.length + word.length + 1 > 100) lines.push(`  ${word}`);
    else lines[lines.length - 1] = lines.at(-1) ? `${lines.at(-1)} ${word}` : word;
  return lines.join("\n");
}

const capitalised = (text: string): string => `${text[0]!.toUpperCase()}${text.slice(1)}.`;
