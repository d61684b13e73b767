import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addBaseWorktree, baseWorktreePrefix, removeBaseWorktree } from "../../../bench/support/base-worktree.ts";

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** The checkouts git knows of, besides the repository's own. */
const worktrees = (repo: string): string[] =>
  git(repo, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice("worktree ".length))
    .slice(1);

describe("the base checkout of bench:compare", () => {
  let root: string;
  let repo: string;
  let parent: string;
  let commit: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "shoal-base-worktree-test-"));
    repo = join(root, "repo");
    parent = join(root, "tmp");
    mkdirSync(repo);
    mkdirSync(parent);
    git(repo, "init", "-q");
    writeFileSync(join(repo, "file.txt"), "base\n");
    git(repo, "add", "file.txt");
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base");
    commit = git(repo, "rev-parse", "HEAD");
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("is named after the commit's short sha, in a directory of the run's own", () => {
    expect(baseWorktreePrefix(commit, parent)).toBe(join(parent, `shoal-bench-base-${commit.slice(0, 7)}-`));
    const checkout = addBaseWorktree(repo, commit, { parent });
    expect(basename(checkout.dir)).toMatch(new RegExp(`^shoal-bench-base-${commit.slice(0, 7)}-.+$`));
    expect(readFileSync(join(checkout.dir, "file.txt"), "utf8")).toBe("base\n");
    expect(git(checkout.dir, "rev-parse", "HEAD")).toBe(commit);
  });

  it("two runs against the same base get two checkouts; removing one leaves the other whole", () => {
    const first = addBaseWorktree(repo, commit, { parent });
    const second = addBaseWorktree(repo, commit, { parent });
    expect(second.dir).not.toBe(first.dir);
    expect(worktrees(repo).sort()).toEqual([first.dir, second.dir].sort());

    first.remove();
    expect(existsSync(first.dir)).toBe(false);
    expect(readFileSync(join(second.dir, "file.txt"), "utf8")).toBe("base\n");
    expect(worktrees(repo)).toEqual([second.dir]);
    second.remove();
    expect(worktrees(repo)).toEqual([]);
  });

  it("links the given node_modules into the checkout", () => {
    const modules = join(root, "node_modules");
    mkdirSync(modules);
    writeFileSync(join(modules, "marker"), "m");
    const checkout = addBaseWorktree(repo, commit, { parent, nodeModules: modules });
    expect(readFileSync(join(checkout.dir, "node_modules", "marker"), "utf8")).toBe("m");
    checkout.remove();
    // The link went, not what it pointed at.
    expect(existsSync(join(modules, "marker"))).toBe(true);
  });

  it("leaves no stale git entry when the directory was already deleted, and a second removal is harmless", () => {
    const checkout = addBaseWorktree(repo, commit, { parent });
    rmSync(checkout.dir, { recursive: true, force: true });
    checkout.remove();
    checkout.remove();
    expect(worktrees(repo)).toEqual([]);
    expect(git(repo, "worktree", "prune", "--dry-run", "--verbose")).toBe("");
  });

  it("a checkout that fails leaves neither a directory nor an entry behind", () => {
    expect(() => addBaseWorktree(repo, "0".repeat(40), { parent })).toThrow();
    expect(worktrees(repo)).toEqual([]);
    expect(execFileSync("ls", ["-A", parent], { encoding: "utf8" })).toBe("");
  });

  it("removes a directory git never registered", () => {
    const dir = mkdtempSync(baseWorktreePrefix(commit, parent));
    writeFileSync(join(dir, "left-over"), "x");
    removeBaseWorktree(repo, dir);
    expect(existsSync(dir)).toBe(false);
  });
});
