import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "./fixtures.ts";

/** Writes `files` (relative path → content; a path ending in / is an empty directory) under `dir`. */
export function writeTree(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [path, content] of Object.entries(files)) {
    if (path.endsWith("/")) {
      mkdirSync(join(dir, path), { recursive: true });
      continue;
    }
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** A fresh temporary directory holding `files` (as writeTree takes them): its path. */
export function treeIn(prefix: string, files: Readonly<Record<string, string>>): string {
  const dir = tempDir(prefix);
  writeTree(dir, files);
  return dir;
}

/**
 * What `dir` holds, as writeTree takes it: each file's content by its relative path, empty directories with a /;
 * a symbolic link as `-> target`.
 */
export function readTree(dir: string, under = ""): Record<string, string> {
  const tree: Record<string, string> = {};
  const entries = readdirSync(join(dir, under), { withFileTypes: true });
  if (entries.length === 0 && under !== "") tree[`${under}/`] = "";
  for (const entry of entries) {
    const path = under === "" ? entry.name : `${under}/${entry.name}`;
    if (entry.isSymbolicLink()) tree[path] = `-> ${readlinkSync(join(dir, path))}`;
    else if (entry.isDirectory()) Object.assign(tree, readTree(dir, path));
    else tree[path] = readFileSync(join(dir, path), "utf8");
  }
  return tree;
}
