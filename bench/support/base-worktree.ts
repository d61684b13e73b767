import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The prefix of a base checkout's directory: the commit's short sha, then a part unique to the run. */
export function baseWorktreePrefix(commit: string, parent: string = tmpdir()): string {
  return join(parent, `shoal-bench-base-${commit.slice(0, 7)}-`);
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

export interface BaseWorktree {
  readonly dir: string;
  /** Removes the checkout and its `git worktree` entry; safe to call twice, and after the directory is gone. */
  remove(): void;
}

/**
 * `commit` checked out (detached) into a new directory of its own under `parent`, with `nodeModules` linked in. Each
 * call gets its own directory: two compares against the same base never share one, so neither removes the checkout
 * the other runs in.
 */
export function addBaseWorktree(
  repo: string,
  commit: string,
  options: { readonly parent?: string; readonly nodeModules?: string } = {},
): BaseWorktree {
  const dir = mkdtempSync(baseWorktreePrefix(commit, options.parent));
  const worktree: BaseWorktree = { dir, remove: () => removeBaseWorktree(repo, dir) };
  try {
    // The directory exists (mkdtemp made it, empty): git checks out into an empty directory.
    git(repo, "worktree", "add", "--detach", dir, commit);
    if (options.nodeModules !== undefined) symlinkSync(options.nodeModules, join(dir, "node_modules"), "dir");
  } catch (e) {
    worktree.remove();
    throw e;
  }
  return worktree;
}

/**
 * Removes a base checkout and what git knows of it. `git worktree remove` refuses a directory already deleted, or
 * one it never registered (a checkout that failed half-way): the directory goes anyway, and prune drops the entry.
 */
export function removeBaseWorktree(repo: string, dir: string): void {
  try {
    git(repo, "worktree", "remove", "--force", dir);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  git(repo, "worktree", "prune");
}
