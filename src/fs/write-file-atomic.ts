import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * The temporary sibling a write goes through. Opened with `wx` (O_CREAT|O_EXCL): the open fails
 * on anything already there, a symlink included, rather than following it, so a link planted at
 * this predictable name cannot make Shoal write a secret elsewhere or truncate another file.
 * What is there is ours to remove (a crash's leftover: in a container the pid is the same at
 * every start), and the link itself goes, not what it points to; a second `wx` that still finds
 * something means someone is racing us for the name, and the write fails.
 */
const tempPath = (path: string): string => `${path}.${process.pid}.tmp`;

function openTemp(temp: string, mode: number): number {
  try {
    return openSync(temp, "wx", mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    rmSync(temp, { force: true });
    return openSync(temp, "wx", mode);
  }
}

async function openTempAsync(temp: string, mode: number): Promise<FileHandle> {
  try {
    return await open(temp, "wx", mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    rmSync(temp, { force: true });
    return await open(temp, "wx", mode);
  }
}

/**
 * Writes `path` so that a reader (or a restart after a crash) sees either the old content or
 * the new, never an empty or half-written file: write a sibling, fsync it, rename over.
 */
export function writeFileAtomic(path: string, content: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempPath(path);
  const fd = openTemp(temp, mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(temp, path);
  // The rename itself must reach the disk, or a power cut could bring back the old name.
  const dir = openSync(dirname(path), "r");
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/**
 * The same guarantee for large binary content, without holding the event loop: the chunks are
 * written and fsynced on libuv's thread pool. Concurrent writers of one path must be serialised
 * by the caller (they share the temporary name).
 */
export async function writeFileAtomicAsync(path: string, chunks: readonly Uint8Array[], mode = 0o644): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempPath(path);
  const file = await openTempAsync(temp, mode);
  try {
    for (const chunk of chunks) {
      // A write may take only part of a large buffer.
      for (let done = 0; done < chunk.length;) done += (await file.write(chunk, done)).bytesWritten;
    }
    await file.sync();
  } catch (e) {
    await file.close();
    rmSync(temp, { force: true });
    throw e;
  }
  await file.close();
  renameSync(temp, path);
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
