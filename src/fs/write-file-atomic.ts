import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Writes `path` so that a reader (or a restart after a crash) sees either the old content or
 * the new, never an empty or half-written file: write a sibling, fsync it, rename over.
 */
export function writeFileAtomic(path: string, content: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, "w", mode);
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
  const temp = `${path}.${process.pid}.tmp`;
  const file = await open(temp, "w", mode);
  try {
    for (const chunk of chunks) {
      // A write may take only part of a large buffer.
      for (let done = 0; done < chunk.length; ) done += (await file.write(chunk, done)).bytesWritten;
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
