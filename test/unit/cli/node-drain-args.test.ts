import { describe, expect, it } from "vitest";
import { nodeCommand } from "../../../src/cli/commands/node-command.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

/** Usage errors are found before anything is sent: the port below has no API behind it. */
const run = (...args: string[]) =>
  nodeCommand([...args, "--api-host", "127.0.0.1", "--api-port", "9", "--api-key", "k"]);

describe("shoal node drain: its flags", () => {
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
    [["drain"], "shoal node drain takes exactly one node id"],
  ])("%j is a usage error", async (args, message) => {
    await expect(run(...args)).rejects.toThrow(new UsageError(message));
  });

  it("refuses a drain's flags on another command, pointing at the node commands' help", async () => {
    await expect(run("approve", "n-1", "--deadline", "5m")).rejects.toThrow(
      new UsageError("--deadline is an option of shoal node drain, not of approve", "shoal node --help"),
    );
  });
});
