import { describe, expect, it } from "vitest";
import { mergeResult } from "../../../../src/cli/results/merge-result.ts";
import { tempDir } from "../../../support/fixtures.ts";
import { readTree, treeIn } from "../../../support/file-tree.ts";

const result = (files: Record<string, string>) => treeIn("shoal-merge-", files);

describe("merging a job's results (Bacalhau's downloader)", () => {
  it("one result: moved as it is", async () => {
    const into = tempDir("shoal-merged-");
    await mergeResult(
      result({ stdout: "hi\n", exitCode: "0", "outputs/a.txt": "a", "outputs/empty/": "" }),
      into,
      false,
    );
    expect(readTree(into)).toEqual({ stdout: "hi\n", exitCode: "0", "outputs/a.txt": "a", "outputs/empty/": "" });
  });

  it("several: stdout and stderr appended, exit codes one a line, result paths merged", async () => {
    const into = tempDir("shoal-merged-");
    await mergeResult(result({ stdout: "one\n", stderr: "", exitCode: "0", "outputs/a.txt": "a" }), into, true);
    await mergeResult(result({ stdout: "two\n", stderr: "oops\n", exitCode: "3", "outputs/b.txt": "b" }), into, true);
    await mergeResult(result({ stdout: "three\n", stderr: "", exitCode: "0", "logs/c.txt": "c" }), into, true);
    expect(readTree(into)).toEqual({
      stdout: "one\ntwo\nthree\n",
      stderr: "oops\n",
      exitCode: "0\n3\n0",
      "outputs/a.txt": "a",
      "outputs/b.txt": "b",
      "logs/c.txt": "c",
    });
  });

  it("a file two results wrote is refused, pointing at --raw; a file where another has a directory too", async () => {
    const into = tempDir("shoal-merged-");
    await mergeResult(result({ "outputs/a.txt": "first", "outputs/d/x": "x" }), into, true);
    await expect(mergeResult(result({ "outputs/a.txt": "second" }), into, true)).rejects.toThrow(
      "cannot merge results as output already exists: outputs/a.txt is in more than one of them. " +
        "Use --raw to download each result on its own",
    );
    await expect(mergeResult(result({ "outputs/d": "a file" }), into, true)).rejects.toThrow(/outputs\/d is in more/);
    await expect(mergeResult(result({ "outputs/a.txt/": "" }), into, true)).rejects.toThrow(/outputs\/a.txt is in/);
    expect(readTree(into)).toEqual({ "outputs/a.txt": "first", "outputs/d/x": "x" });
  });

  it("stdout is appended only at the top: a nested stdout two results wrote is refused", async () => {
    const into = tempDir("shoal-merged-");
    await mergeResult(result({ "outputs/stdout": "1" }), into, true);
    await expect(mergeResult(result({ "outputs/stdout": "2" }), into, true)).rejects.toThrow(/outputs\/stdout/);
  });
});
