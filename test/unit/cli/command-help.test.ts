import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { CommandSpec } from "../../../src/cli/help/command-spec.ts";
import { bashCompletion, zshCompletion } from "../../../src/cli/help/completion-script.ts";
import { findCommand } from "../../../src/cli/help/find-command.ts";
import { helpText } from "../../../src/cli/help/help-text.ts";
import { didYouMean, editDistance, suggestions } from "../../../src/cli/help/suggest.ts";

const TREE: CommandSpec = {
  name: "tool",
  summary: "a tool",
  usage: "<command> [options]",
  subcommands: [
    {
      name: "node",
      summary: "nodes",
      usage: "<command> [options]",
      subcommands: [
        {
          name: "list",
          summary: "list nodes",
          usage: "[options]",
          options: [
            { name: "output", short: "o", arg: "FORMAT", description: "the format", choices: ["table", "json"] },
            { name: "watch", short: "w", description: "again and again" },
          ],
          shared: ["config"],
          examples: ["tool node list -o json"],
        },
        { name: "logs", summary: "its logs", usage: "<id>" },
      ],
    },
    { name: "version", summary: "the version", usage: "[options]" },
  ],
};

const at = (...words: string[]) => findCommand(TREE, words).path;

describe("help from the spec", () => {
  it("has the usage line, the description, its own options, a pointer to the shared ones, and examples", () => {
    expect(helpText(at("node", "list"))).toBe(`Usage: tool node list [options]

List nodes.

Options:
  -o, --output FORMAT      the format
  -w, --watch              again and again
  -h, --help               show this help

Config options (shoal --help): -c, --config

Examples:
  tool node list -o json`);
  });

  it("lists a group's subcommands and where their options are", () => {
    const help = helpText(at("node"));
    expect(help).toContain("Commands:\n  list                     list nodes\n  logs                     its logs\n");
    expect(help).toContain("Run 'tool node <command> --help' for a command's options.");
  });

  it("stops at the first word that is not a command", () => {
    expect(findCommand(TREE, ["node", "list", "extra"]).rest).toEqual(["extra"]);
    expect(findCommand(TREE, ["nod", "list"]).path.map((c) => c.name)).toEqual(["tool"]);
  });
});

describe("did you mean", () => {
  it("counts a swap of neighbours as one edit", () => {
    expect(editDistance("lsit", "list")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("suggests the closest, best first, and a command the word begins", () => {
    expect(suggestions("lst", ["list", "logs", "version"])).toEqual(["list"]);
    expect(suggestions("desc", ["describe", "delete"])).toEqual(["describe"]);
    expect(suggestions("--limt", ["--limit", "--labels", "--api-host"])).toEqual(["--limit"]);
    expect(suggestions("frobnicate", ["list", "logs"])).toEqual([]);
    expect(didYouMean("nde", ["node", "job"])).toBe('\nDid you mean "node"?');
    expect(didYouMean("lo", ["logs", "log"])).toBe('\nDid you mean one of "log", "logs"?');
  });
});

/** Sources the script in a real bash and asks it to complete `words` (the last one is the word being typed). */
function complete(script: string, ...words: string[]): string[] {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const out = execFileSync(
    "bash",
    [
      "-c",
      `${script}\nCOMP_WORDS=(tool ${quoted}); COMP_CWORD=${words.length}; _tool; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { encoding: "utf8" },
  );
  return out.split("\n").filter(Boolean);
}

describe("bash completion from the spec", () => {
  const script = bashCompletion(TREE);

  it("completes commands, subcommands, options and the values of closed-choice options", () => {
    expect(complete(script, "")).toEqual(["node", "version"]);
    expect(complete(script, "node", "l")).toEqual(["list", "logs"]);
    expect(complete(script, "node", "list", "--w")).toEqual(["--watch"]);
    expect(complete(script, "node", "list", "-o", "j")).toEqual(["json"]);
    expect(complete(script, "node", "list", "--output", "")).toEqual(["table", "json"]);
    expect(complete(script, "node", "list", "--c")).toEqual(["--config"]);
  });

  it("offers nothing where the words have left the tree", () => {
    expect(complete(script, "nod", "l")).toEqual([]);
  });

  it("the zsh script is the bash one under zsh's bashcompinit", () => {
    const zsh = zshCompletion(TREE);
    expect(zsh.split("\n")[0]).toBe("#compdef tool");
    expect(zsh).toContain("autoload -U +X bashcompinit && bashcompinit\n");
    expect(zsh).toContain(bashCompletion(TREE).split("\n").slice(1).join("\n"));
    expect(zsh.trimEnd().endsWith("complete -F _tool tool")).toBe(true);
  });
});
