import { constants } from "node:fs";
import { copyFile, link, lstat, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { DownloadError } from "./download-error.ts";

export interface Move {
  readonly from: string;
  readonly to: string;
  readonly directory: boolean;
}

/**
 * What moving `tree` into `dir` takes: each entry `dir` lacks moves whole; a directory `dir` already has is merged
 * entry by entry; anything else already there (a file, a link, a directory where the tree has a file) is a conflict.
 */
async function plan(tree: string, dir: string, under: string, moves: Move[], conflicts: string[]): Promise<void> {
  const entries = await readdir(join(tree, under), { withFileTypes: true });
  // In name order: the same tree moves the same way on every file system.
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const relative = under === "" ? entry.name : join(under, entry.name);
    const target = join(dir, relative);
    const there = await lstat(target).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return undefined;
      throw e;
    });
    if (there === undefined) moves.push({ from: join(tree, relative), to: target, directory: entry.isDirectory() });
    else if (entry.isDirectory() && there.isDirectory()) await plan(tree, dir, relative, moves, conflicts);
    else conflicts.push(target);
  }
}

/** A file put at `to` only if nothing is there (a hard link cannot replace; a copy where links are not supported). */
async function place(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") throw alreadyThere([to]);
    await copyFile(from, to, constants.COPYFILE_EXCL);
  }
}

const alreadyThere = (conflicts: readonly string[]) =>
  new DownloadError(
    `cannot merge results as output already exists: ${conflicts[0]}` +
      `${conflicts.length > 1 ? ` (and ${conflicts.length - 1} more)` : ""}. Use another --output-dir`,
  );

/**
 * The moves that put what the staged `tree` holds into `dir` (on the same file system): every conflict is found
 * before anything moves.
 */
export async function planMoves(tree: string, dir: string): Promise<Move[]> {
  const moves: Move[] = [];
  const conflicts: string[] = [];
  await plan(tree, dir, "", moves, conflicts);
  if (conflicts.length > 0) throw alreadyThere(conflicts);
  return moves;
}

/**
 * Carries out planned moves, all or nothing: nothing already in place is overwritten (something written there since
 * the plan is a conflict), and a move that fails takes back the ones made.
 */
export async function carryOut(moves: readonly Move[]): Promise<void> {
  const done: Move[] = [];
  try {
    for (const move of moves) {
      // A directory renamed onto one made meanwhile replaces it only if that one is empty (else ENOTEMPTY).
      if (move.directory) await rename(move.from, move.to);
      else await place(move.from, move.to);
      done.push(move);
    }
  } catch (e) {
    for (const move of done.reverse())
      await (move.directory ? rename(move.to, move.from) : unlink(move.to)).catch(() => undefined);
    throw e;
  }
}

/** Moves what the staged `tree` holds into `dir`, all or nothing; what stays in `tree` is the caller's to remove. */
export async function moveIntoPlace(tree: string, dir: string): Promise<void> {
  await carryOut(await planMoves(tree, dir));
}
