/**
 * The first `limit` bytes of one output stream, and how many were written in all. A chatty
 * command cannot grow the node's memory: what is past the limit is counted, not kept.
 */
export class BoundedOutput {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(readonly limit: number) {}

  push(data: Buffer): void {
    this.#total += data.length;
    const room = this.limit - this.#kept;
    if (room <= 0) return;
    const part = data.length <= room ? data : data.subarray(0, room);
    this.#chunks.push(part);
    this.#kept += part.length;
  }

  get truncated(): boolean {
    return this.#total > this.#kept;
  }

  get totalBytes(): number {
    return this.#total;
  }

  /** The kept bytes as UTF-8; a character the limit cut in two is dropped, not mangled. */
  text(): string {
    let bytes = Buffer.concat(this.#chunks, this.#kept);
    if (this.truncated) bytes = bytes.subarray(0, completeUtf8Length(bytes));
    return bytes.toString("utf8");
  }
}

/** The length of `bytes` without a trailing, incomplete UTF-8 sequence. */
function completeUtf8Length(bytes: Buffer): number {
  let start = bytes.length;
  // A sequence is at most 4 bytes: walk back over continuation bytes (10xxxxxx) to its lead byte.
  while (start > 0 && bytes.length - start < 4 && ((bytes[start - 1] ?? 0) & 0xc0) === 0x80) start--;
  if (start === 0) return bytes.length;
  const lead = bytes[start - 1] ?? 0;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - (start - 1) >= needed ? bytes.length : start - 1;
}
