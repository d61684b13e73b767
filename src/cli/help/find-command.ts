import type { CommandSpec, OptionSpec } from "./command-spec.ts";
import { SHARED_GROUPS } from "./shared-options.ts";

/** Where the command words of argv lead: the deepest command they name, and the words after it. */
export interface FoundCommand {
  /** From the root: [shoal, node, drain]. */
  readonly path: readonly CommandSpec[];
  readonly rest: readonly string[];
}

export function findCommand(root: CommandSpec, words: readonly string[]): FoundCommand {
  const path: CommandSpec[] = [root];
  let i = 0;
  for (; i < words.length; i++) {
    const next = path.at(-1)!.subcommands?.find((s) => s.name === words[i]);
    if (next === undefined) break;
    path.push(next);
  }
  return { path, rest: words.slice(i) };
}

/** `shoal node drain` */
export const commandLine = (path: readonly CommandSpec[]): string => path.map((c) => c.name).join(" ");

/** A command's own options, the shared groups it takes, and -h/--help. */
export function allOptions(spec: CommandSpec): OptionSpec[] {
  return [
    ...(spec.options ?? []),
    ...(spec.shared ?? []).flatMap((group) => SHARED_GROUPS[group].options),
    HELP_OPTION,
  ];
}

/** How an option may be typed: --output and -o; -c for the one whose long name is one letter. */
export function optionSpellings(option: OptionSpec): string[] {
  const long = option.name.length === 1 ? `-${option.name}` : `--${option.name}`;
  return option.short && option.short !== option.name ? [long, `-${option.short}`] : [long];
}

export const HELP_OPTION: OptionSpec = { name: "help", short: "h", description: "show this help" };

/** Every command of the tree with its path, depth first: what the e2e test and the reference walk. */
export function everyCommand(root: CommandSpec): CommandSpec[][] {
  const walk = (path: CommandSpec[]): CommandSpec[][] => [
    path,
    ...(path.at(-1)!.subcommands ?? []).flatMap((s) => walk([...path, s])),
  ];
  return walk([root]);
}
