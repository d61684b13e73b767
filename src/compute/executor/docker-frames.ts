import type { LogChunk } from "./executor.ts";

const HEADER = 8;

/**
 * Splits Docker's multiplexed log stream (containers without a TTY) into stdout and stderr
 * chunks: each frame is an 8-byte header — stream type (1 stdout, 2 stderr), three zero bytes,
 * a big-endian payload length — then the payload. A frame may span reads, and a read may
 * hold many frames.
 */
export async function* dockerFrames(
  stream: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
): AsyncGenerator<LogChunk> {
  let pending = Buffer.alloc(0);
  for await (const piece of stream) {
    pending = pending.length === 0 ? Buffer.from(piece) : Buffer.concat([pending, Buffer.from(piece)]);
    let offset = 0;
    while (pending.length - offset >= HEADER) {
      const size = pending.readUInt32BE(offset + 4);
      if (pending.length - offset - HEADER < size) break;
      const type = pending[offset];
      const data = Buffer.from(pending.subarray(offset + HEADER, offset + HEADER + size));
      offset += HEADER + size;
      if (type === 1) yield { stream: "stdout", data };
      else if (type === 2) yield { stream: "stderr", data };
      // Type 0 (stdin) never appears in logs; a type Docker adds later is skipped, not misread.
    }
    pending = pending.subarray(offset);
  }
}
