import type { CommandSpec } from "./command-spec.ts";
import { commandLine, everyCommand } from "./find-command.ts";
import { helpText } from "./help-text.ts";

/** docs/cli.md: every command's help, as `--help` prints it, in the tree's order. */
export function cliReference(root: CommandSpec): string {
  const commands = everyCommand(root);
  const index = commands
    .slice(1)
    .map((path) => `${"  ".repeat(path.length - 2)}- [${commandLine(path)}](#${anchor(path)})`);
  const sections = commands.map((path) => `## ${commandLine(path)}\n\n\`\`\`text\n${helpText(path)}\n\`\`\``);
  return `# The shoal command

<!-- Generated from the CLI's command tree by \`npm run docs:cli\`; do not edit. -->

Every command and subcommand prints this with \`--help\` (or \`shoal help <command>\`). A mistyped command or
option is refused with the closest ones suggested; \`shoal completion bash\` (or \`zsh\`) prints a completion script.

${index.join("\n")}

${sections.join("\n\n")}
`;
}

const anchor = (path: readonly CommandSpec[]): string => commandLine(path).replace(/ /g, "-");
