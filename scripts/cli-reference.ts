/**
 * docs/cli.md from the CLI's command tree (src/cli/help/command-tree.ts):
 *   npm run docs:cli     write it
 * test/unit/cli/cli-reference.test.ts fails when the checked-in file differs from what this writes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMAND_TREE } from "../src/cli/help/command-tree.ts";
import { cliReference } from "../src/cli/help/cli-reference.ts";

writeFileSync(join(import.meta.dirname, "../docs/cli.md"), cliReference(COMMAND_TREE));
