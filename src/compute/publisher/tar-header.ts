/**
 * POSIX ustar headers, as Bacalhau's results archives (Go's archive/tar) hold them: 512-byte
 * blocks, octal numbers, a name split over `prefix` and `name` when longer than 100 bytes. Only
 * regular files and directories are written; a reader is told the other kinds so that it can
 * skip them.
 */
export const BLOCK = 512;

export type TarEntryType = "file" | "directory" | "pax" | "other";

export interface TarHeader {
  readonly name: string;
  readonly size: number;
  readonly mode: number;
  /** Seconds since the epoch. */
  readonly mtime: number;
  readonly type: TarEntryType;
}

/** Octal in 11 digits: sizes up to 8 GiB (what fits ustar without extensions). */
export const MAX_TAR_ENTRY_BYTES = 8 ** 11 - 1;

function octal(block: Buffer, at: number, length: number, value: number): void {
  block.write(
    `${Math.floor(value)
      .toString(8)
      .padStart(length - 1, "0")}\0`,
    at,
    length,
    "ascii",
  );
}

function splitName(name: string): { prefix: string; rest: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: "", rest: name };
  for (let i = name.indexOf("/"); i !== -1; i = name.indexOf("/", i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest !== "") return { prefix, rest };
  }
  throw new Error(`the path ${JSON.stringify(name)} is too long for a tar archive (255 bytes, 100 per name)`);
}

export function encodeTarHeader(header: TarHeader): Buffer {
  if (header.size > MAX_TAR_ENTRY_BYTES) throw new Error(`${header.name} is larger than a tar entry holds`);
  const block = Buffer.alloc(BLOCK);
  const { prefix, rest } = splitName(header.name);
  block.write(rest, 0, 100, "utf8");
  octal(block, 100, 8, header.mode & 0o7777);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, header.size);
  octal(block, 136, 12, header.mtime);
  block.fill(0x20, 148, 156);
  block.write(header.type === "directory" ? "5" : "0", 156, 1, "ascii");
  block.write("ustar\u000000", 257, 8, "binary");
  block.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return block;
}

function text(block: Buffer, at: number, length: number): string {
  const end = block.indexOf(0, at);
  return block.toString("utf8", at, end === -1 || end > at + length ? at + length : end);
}

function number(block: Buffer, at: number, length: number): number {
  const digits = text(block, at, length).trim();
  return digits === "" ? 0 : parseInt(digits, 8);
}

/** A header block read back, or undefined for the zero block that ends an archive. Throws on a corrupt one. */
export function decodeTarHeader(block: Buffer): TarHeader | undefined {
  if (block.every((b) => b === 0)) return undefined;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] as number);
  if (sum !== number(block, 148, 8)) throw new Error("not a tar archive (a header's checksum does not match)");
  const flag = String.fromCharCode(block[156] as number);
  const type: TarEntryType =
    flag === "0" || flag === "\0" || flag === "7"
      ? "file"
      : flag === "5"
        ? "directory"
        : flag === "x"
          ? "pax"
          : "other";
  const prefix = block.toString("binary", 257, 262) === "ustar" ? text(block, 345, 155) : "";
  const name = text(block, 0, 100);
  return {
    name: prefix === "" ? name : `${prefix}/${name}`,
    size: number(block, 124, 12),
    mode: number(block, 100, 8),
    mtime: number(block, 136, 12),
    type,
  };
}

/** The `path` record of a PAX extended header (long names as Go writes them), if it has one. */
export function paxPath(data: Buffer): string | undefined {
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = parseInt(data.toString("ascii", at, space), 10);
    if (!Number.isInteger(length) || length <= 0) break;
    const record = data.toString("utf8", space + 1, at + length - 1);
    if (record.startsWith("path=")) return record.slice(5);
    at += length;
  }
  return undefined;
}
