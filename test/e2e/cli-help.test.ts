import { describe, expect, it } from "vitest";
import { COMMAND_TREE } from "../../src/cli/help/command-tree.ts";
import { commandLine, everyCommand } from "../../src/cli/help/find-command.ts";
import { runShoal } from "../support/shoal-process.ts";

// From the tree: a command added to it is covered here by itself.
const commands = everyCommand(COMMAND_TREE).slice(1);

describe("shoal's help, typos and completion (the compiled CLI)", () => {
  it("prints each command's own help for --help, -h and `shoal help …`, exit 0", async () => {
    for (const path of commands) {
      const words = path.slice(1).map((c) => c.name);
      const line = commandLine(path);
      const usage = `Usage: ${line} ${path.at(-1)!.usage}\n`;
      for (const args of [
        [...words, "--help"],
        ["help", ...words],
      ]) {
        const res = await runShoal(args);
        expect(res.code, args.join(" ")).toBe(0);
        expect(res.stdout.startsWith(usage), args.join(" ")).toBe(true);
      }
    }
    expect((await runShoal(["node", "drain", "n-1", "-h"])).stdout).toMatch(/^Usage: shoal node drain /);
  }, 120_000);

  it("refuses an unknown command, subcommand or option with the closest ones, exit 2", async () => {
    for (const [args, error, hint, help] of [
      [["nod", "list"], 'unknown command "nod"', 'Did you mean "node"?', "shoal --help"],
      [["node", "darin", "n-1"], 'unknown node command "darin"', 'Did you mean "drain"?', "shoal node --help"],
      [["help", "job", "lsit"], 'unknown job command "lsit"', 'Did you mean "list"?', "shoal job --help"],
      [["job", "list", "--limt", "3"], "Unknown option '--limt'", 'Did you mean "--limit"?', "shoal job list --help"],
      [["agent", "verison"], 'unknown agent command "verison"', 'Did you mean "version"?', "shoal agent --help"],
    ] as const) {
      const res = await runShoal([...args]);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toContain(`Error: ${error}`);
      expect(res.stderr, args.join(" ")).toContain(`\n${hint}\nRun '${help}' for usage.`);
    }
    const far = await runShoal(["frobnicate"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toBe(`Error: unknown command "frobnicate"\nRun 'shoal --help' for usage.\n`);
  });

  it("a group without its subcommand prints its help on stderr, exit 2", async () => {
    const res = await runShoal(["job"]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(/^Usage: shoal job <command> \[options\]\n/);
  });

  it("prints completion scripts that bash runs", async () => {
    const bash = await runShoal(["completion", "bash"]);
    expect(bash.code).toBe(0);
    expect(bash.stdout).toContain("complete -F _shoal shoal");
    expect((await runShoal(["completion", "zsh"])).stdout.split("\n")[0]).toBe("#compdef shoal");
    const wrong = await runShoal(["completion", "fish"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('shoal completion takes bash or zsh, got "fish"');
  });
});
