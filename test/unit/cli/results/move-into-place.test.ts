import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { carryOut, moveIntoPlace, planMoves } from "../../../../src/cli/results/move-into-place.ts";
import { tempDir } from "../../../support/fixtures.ts";
import { readTree, treeIn, writeTree } from "../../../support/file-tree.ts";

const tree = (files: Record<string, string>) => treeIn("shoal-staged-", files);

describe("moving a staged download into place", () => {
  it("into what the directory already holds: new entries moved, directories it has merged", async () => {
    const dir = tempDir("shoal-out-");
    writeTree(dir, { "notes.txt": "mine", "outputs/old.txt": "old" });
    await moveIntoPlace(tree({ stdout: "hi", "outputs/new.txt": "new", "outputs/sub/x": "x", "empty/": "" }), dir);
    expect(readTree(dir)).toEqual({
      "notes.txt": "mine",
      "outputs/old.txt": "old",
      "outputs/new.txt": "new",
      "outputs/sub/x": "x",
      stdout: "hi",
      "empty/": "",
    });
  });

  it("refuses before moving anything when something is already there, naming it and how many more", async () => {
    const dir = tempDir("shoal-out-");
    writeTree(dir, { stdout: "earlier", "outputs/a.txt": "earlier", "other/": "" });
    symlinkSync(join(dir, "other"), join(dir, "linked"));
    const staged = tree({ exitCode: "0", stdout: "new", "outputs/a.txt": "new", "outputs/b.txt": "b", "linked/f": "" });
    await expect(moveIntoPlace(staged, dir)).rejects.toThrow(
      `cannot merge results as output already exists: ${join(dir, "linked")} (and 2 more). Use another --output-dir`,
    );
    expect(readTree(dir)).toEqual({
      stdout: "earlier",
      "outputs/a.txt": "earlier",
      "other/": "",
      linked: `-> ${join(dir, "other")}`,
    });
  });

  it("a move that fails half-way (something written there since the plan) takes back the ones made", async () => {
    const dir = tempDir("shoal-out-");
    const staged = tree({ "a/1": "1", "b.txt": "b", "c.txt": "c", "d.txt": "d" });
    const moves = await planMoves(staged, dir);
    writeTree(dir, { "c.txt": "someone else's" });
    await expect(carryOut(moves)).rejects.toThrow(
      `cannot merge results as output already exists: ${join(dir, "c.txt")}. Use another --output-dir`,
    );
    expect(readTree(dir)).toEqual({ "c.txt": "someone else's" });
    expect(readTree(staged)).toEqual({ "a/1": "1", "b.txt": "b", "c.txt": "c", "d.txt": "d" });
  });

  it("an empty staging moves nothing", async () => {
    const dir = tempDir("shoal-out-");
    mkdirSync(join(dir, "kept"));
    await moveIntoPlace(tree({}), dir);
    expect(readTree(dir)).toEqual({ "kept/": "" });
  });
});
