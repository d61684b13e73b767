import { mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { createGunzip } from "node:zlib";
import { Readable } from "node:stream";
import { DownloadError } from "./download-error.ts";
import { BLOCK, decodeTarHeader, paxPath, type TarHeader } from "../../compute/publisher/tar-header.ts";

export interface Unpacked {
  readonly files: number;
  readonly bytes: number;
  /** Entries that are neither files nor directories (links, devices): not written. */
  readonly skipped: readonly string[];
}

/** The entry's path inside `dir`; throws for one that would land outside it. */
function inside(dir: string, name: string): string {
  const clean = normalize(name.replace(/\/+$/, ""));
  if (clean === "." || clean === "") return dir;
  if (isAbsolute(name) || clean === ".." || clean.startsWith(`..${sep}`) || clean.split(sep).includes(".."))
    throw new DownloadError(`the archive's entry ${JSON.stringify(name)} points outside the output directory: refused`);
  return join(dir, clean);
}

/**
 * Unpacks a gzip-compressed tar archive (a published result) into `dir` as Bacalhau's downloader
 * does: directories and regular files; links and other kinds skipped. Refuses an entry that
 * would land outside `dir` and an archive whose files hold more than `maxBytes` in all.
 */
export async function unpackTarGz(source: AsyncIterable<Uint8Array>, dir: string, maxBytes: number): Promise<Unpacked> {
  let pending: Buffer = Buffer.alloc(0);
  let header: TarHeader | undefined;
  let longName: string | undefined;
  let left = 0;
  let pad = 0;
  let file: FileHandle | undefined;
  let pax: Buffer[] | undefined;
  let files = 0;
  let bytes = 0;
  let ended = false;
  const skipped: string[] = [];

  const begin = async (h: TarHeader): Promise<void> => {
    const name = longName ?? h.name;
    longName = undefined;
    left = h.size;
    pad = (BLOCK - (h.size % BLOCK)) % BLOCK;
    if (h.type === "pax") {
      pax = [];
      return;
    }
    if (h.type === "other") {
      skipped.push(name);
      return;
    }
    const target = inside(dir, name);
    if (h.type === "directory") {
      await mkdir(target, { recursive: true });
      return;
    }
    bytes += h.size;
    if (bytes > maxBytes)
      throw new DownloadError(
        `a result unpacks to more than ${maxBytes} bytes, the most this download takes (--max-size): refused`,
      );
    await mkdir(dirname(target), { recursive: true });
    file = await open(target, "wx", 0o644);
    files++;
    if (left === 0) {
      await file.close();
      file = undefined;
    }
  };

  try {
    for await (const chunk of Readable.from(source).pipe(createGunzip())) {
      pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
      for (;;) {
        if (ended) break;
        if (left > 0) {
          if (pending.length === 0) break;
          const part = pending.subarray(0, Math.min(left, pending.length));
          pending = pending.subarray(part.length);
          left -= part.length;
          if (file) await file.write(part);
          else pax?.push(part);
          if (left === 0) {
            await file?.close();
            file = undefined;
            if (pax) longName = paxPath(Buffer.concat(pax));
            pax = undefined;
          }
          continue;
        }
        if (pad > 0) {
          const n = Math.min(pad, pending.length);
          if (n === 0) break;
          pending = pending.subarray(n);
          pad -= n;
          continue;
        }
        if (pending.length < BLOCK) break;
        header = decodeTarHeader(pending.subarray(0, BLOCK));
        pending = pending.subarray(BLOCK);
        if (header === undefined) ended = true;
        else await begin(header);
      }
    }
  } finally {
    await file?.close();
  }
  if (left > 0 || (!ended && header !== undefined)) throw new DownloadError("the archive ends early: it is incomplete");
  return { files, bytes, skipped };
}
