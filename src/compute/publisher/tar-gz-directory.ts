import { createReadStream, createWriteStream } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { BLOCK, encodeTarHeader } from "./tar-header.ts";

/** A regular file or directory under the archived one, by its path relative to it. */
export interface DirectoryEntry {
  readonly name: string;
  readonly path: string;
  readonly type: "file" | "directory";
  readonly size: number;
  readonly mode: number;
  readonly mtime: number;
}

/**
 * Every regular file and directory under `dir`, parents before children, in name order. Symbolic
 * links and devices are left out: a link written by a container points into the container's
 * filesystem, not at anything the archive could hold.
 */
export async function directoryEntries(dir: string, under = ""): Promise<DirectoryEntry[]> {
  const entries: DirectoryEntry[] = [];
  const names = (await readdir(join(dir, under))).sort();
  for (const name of names) {
    const relative = under === "" ? name : `${under}/${name}`;
    const path = join(dir, relative);
    const stat = await lstat(path);
    const common = { name: relative, path, mode: stat.mode, mtime: Math.floor(stat.mtimeMs / 1000) };
    if (stat.isDirectory()) {
      entries.push({ ...common, type: "directory", size: 0 });
      entries.push(...(await directoryEntries(dir, relative)));
    } else if (stat.isFile()) entries.push({ ...common, type: "file", size: stat.size });
  }
  return entries;
}

async function* tarOf(entries: readonly DirectoryEntry[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    const name = entry.type === "directory" ? `${entry.name}/` : entry.name;
    yield encodeTarHeader({ name, size: entry.size, mode: entry.mode, mtime: entry.mtime, type: entry.type });
    if (entry.type === "directory" || entry.size === 0) continue;
    let written = 0;
    // A file that grew since it was listed is cut at its listed size: the header already said it.
    for await (const chunk of createReadStream(entry.path, { end: Math.max(entry.size - 1, 0) })) {
      const data = chunk as Buffer;
      const part = data.subarray(0, entry.size - written);
      written += part.length;
      yield part;
      if (written >= entry.size) break;
    }
    // A file that shrank is padded with zeros to what its header said.
    if (written < entry.size) yield Buffer.alloc(entry.size - written);
    const pad = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    if (pad > 0) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(2 * BLOCK);
}

/** Writes `entries` (from `directoryEntries`) as a gzip-compressed tar archive to `target`. */
export async function writeTarGz(entries: readonly DirectoryEntry[], target: string): Promise<void> {
  await pipeline(Readable.from(tarOf(entries)), createGzip(), createWriteStream(target, { mode: 0o600 }));
}
