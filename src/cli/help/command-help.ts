import { COMMAND_TREE } from "./command-tree.ts";
import { findCommand } from "./find-command.ts";
import { helpText } from "./help-text.ts";

/** The help of a command by its line (`shoal node drain`), as its --help prints it. */
export const commandHelp = (line: string): string => helpText(findCommand(COMMAND_TREE, line.split(" ").slice(1)).path);
