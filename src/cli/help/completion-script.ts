import type { CommandSpec } from "./command-spec.ts";
import { allOptions, commandLine, everyCommand, optionSpellings } from "./find-command.ts";

export const COMPLETION_SHELLS = ["bash", "zsh"] as const;

const words = (list: readonly string[]): string => list.join(" ");

/**
 * A bash completion function generated from the tree: it walks the words typed so far down the tree, then offers
 * the values of a closed-choice option just typed, the command's options after a dash, else its subcommands.
 */
export function bashCompletion(root: CommandSpec): string {
  const commands = everyCommand(root);
  const steps = commands
    .filter((path) => path.length > 1)
    .map((path) => `"${commandLine(path.slice(0, -1))} ${path.at(-1)!.name}"`);
  const choices = commands.flatMap((path) =>
    allOptions(path.at(-1)!)
      .filter((o) => o.choices)
      .map((o) => {
        const pattern = optionSpellings(o)
          .map((s) => `"${commandLine(path)}|${s}"`)
          .join("|");
        return `    ${pattern}) COMPREPLY=($(compgen -W "${words(o.choices!)}" -- "$cur")); return ;;`;
      }),
  );
  const menus = commands.map((path) => {
    const spec = path.at(-1)!;
    const subs = words((spec.subcommands ?? []).map((s) => s.name));
    const opts = words(allOptions(spec).flatMap(optionSpellings));
    return `    "${commandLine(path)}") subs="${subs}"; opts="${opts}" ;;`;
  });
  const name = root.name;
  return `# bash completion for ${name}; load it with: source <(${name} completion bash)
_${name}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="${name}" subs="" opts="" i
  ((COMP_CWORD > 0)) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "$path \${COMP_WORDS[i]}" in
      ${steps.join("|\\\n      ")}) path="$path \${COMP_WORDS[i]}" ;;
    esac
  done
  case "$path|$prev" in
${choices.join("\n")}
  esac
  case "$path" in
${menus.join("\n")}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  fi
}
complete -F _${name} ${name}
`;
}

/** zsh runs the bash function through its bashcompinit, so both shells complete the same words. */
export function zshCompletion(root: CommandSpec): string {
  return `#compdef ${root.name}
# zsh completion for ${root.name}; load it with: source <(${root.name} completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(root).split("\n").slice(1).join("\n")}`;
}
