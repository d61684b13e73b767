import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliReference } from "../../../src/cli/help/cli-reference.ts";
import { COMMAND_TREE } from "../../../src/cli/help/command-tree.ts";
import { commandLine, everyCommand } from "../../../src/cli/help/find-command.ts";

const DOC = join(import.meta.dirname, "../../../docs/cli.md");

describe("docs/cli.md", () => {
  it("is what `npm run docs:cli` writes from the command tree (run it after changing a command's spec)", () => {
    expect(readFileSync(DOC, "utf8")).toBe(cliReference(COMMAND_TREE));
  });

  it("has a section for every command, holding its help", () => {
    const reference = cliReference(COMMAND_TREE);
    for (const path of everyCommand(COMMAND_TREE))
      expect(reference).toContain(`## ${commandLine(path)}\n\n\`\`\`text\nUsage: ${commandLine(path)} `);
  });
});
