import { describe, expect, it } from "vitest";
import { nodeCommand } from "../../../src/cli/commands/node-command.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

/** Usage errors are found before anything is sent: the port below has no API behind it. */
const run = (...args: string[]) =>
  nodeCommand([...args, "--api-host", "127.0.0.1", "--api-port", "9", "--api-key", "k"]);

describe("shoal node drain and -l SELECTOR: their flags", () => {
  it.each([
    [["drain", "n-1", "--deadline", "soon"], "--deadline must be a positive duration like 10m or 1h30m; got soon"],
    [["drain", "n-1", "--deadline", "0s"], "--deadline must be a positive duration like 10m or 1h30m; got 0s"],
    [
      ["drain", "n-1", "--disable", "--deadline", "5m"],
      "shoal node drain --disable takes neither --deadline nor --keep-daemon",
    ],
    [
      ["drain", "n-1", "--disable", "--keep-daemon"],
      "shoal node drain --disable takes neither --deadline nor --keep-daemon",
    ],
    [["drain"], "shoal node drain takes exactly one node id (or -l SELECTOR)"],
  ])("%j is a usage error", async (args, message) => {
    await expect(run(...args)).rejects.toThrow(new UsageError(message));
  });

  it.each([
    [["drain", "n-1", "--monitor", "--disable"], "--monitor and --wait follow a drain: not with --disable"],
    [["drain", "n-1", "--wait", "--output", "json"], "--monitor and --wait take no --output"],
    [["drain", "-l", "zone=a", "--wait"], "--monitor and --wait follow one node's drain: give its id, not -l"],
    [["cordon", "n-1", "-l", "zone=a"], "shoal node cordon: give a node id or -l SELECTOR, not both"],
    [["label", "n-1", "team=a", "-l", "zone=a"], "shoal node label: give a node id or -l SELECTOR, not both"],
    [["cordon", "-l", ""], "-l takes a label selector (zone=a, env in (prod,stage), !spot)"],
    [["cordon", "-l", "zone in (a"], `-l: unbalanced '(' in label selector "zone in (a"`],
    [
      ["delete", "-l", "zone=a"],
      "--labels is an option of shoal node list/approve/cordon/uncordon/drain/label, not of delete",
    ],
    [["list", "--yes"], "--yes is an option of shoal node approve/cordon/uncordon/drain/label, not of list"],
  ])("%j is a usage error before anything is asked of the API", async (args, message) => {
    await expect(run(...args)).rejects.toThrow(new UsageError(message, "shoal node --help"));
  });

  it("refuses a drain's flags on another command, pointing at the node commands' help", async () => {
    await expect(run("approve", "n-1", "--deadline", "5m")).rejects.toThrow(
      new UsageError("--deadline is an option of shoal node drain, not of approve", "shoal node --help"),
    );
  });
});
