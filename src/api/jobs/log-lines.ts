import type { OutputChunk } from "../../transport/node-log-client.ts";

/** Bacalhau's models.ExecutionLogType: 1 stdout, 2 stderr (0 is unknown). */
export type ExecutionLogType = 1 | 2;
/** Bacalhau's models.ExecutionLog: one line of an execution's output, its newline kept. */
export interface ExecutionLog {
  readonly Type: ExecutionLogType;
  readonly Line: string;
}

const TYPE = { stdout: 1, stderr: 2 } as const;
/** A line longer than this is given in pieces of this size (so that one line cannot hold unbounded memory). */
export const MAX_LINE_BYTES = 64 * 1024;

/**
 * Cuts an execution's output chunks into lines, per stream: a chunk may end inside a line (or
 * inside a UTF-8 character) and the next chunk of the same stream goes on with it, while chunks
 * of the other stream may come in between. Bytes are decoded a whole line at a time.
 */
export class LogLines {
  private readonly partial: Record<OutputChunk["stream"], Buffer[]> = { stdout: [], stderr: [] };
  private readonly partialBytes = { stdout: 0, stderr: 0 };

  push(chunk: OutputChunk): ExecutionLog[] {
    const lines: ExecutionLog[] = [];
    const data = Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
    let from = 0;
    for (;;) {
      const nl = data.indexOf(10, from);
      const end = nl === -1 ? data.length : nl + 1;
      if (end > from) {
        this.partial[chunk.stream].push(data.subarray(from, end));
        this.partialBytes[chunk.stream] += end - from;
      }
      if (nl === -1) {
        if (this.partialBytes[chunk.stream] >= MAX_LINE_BYTES) lines.push(...this.take(chunk.stream));
        return lines;
      }
      lines.push(...this.take(chunk.stream));
      from = end;
    }
  }

  /** What is left at the end of the output: each stream's unterminated last line. */
  flush(): ExecutionLog[] {
    return [...this.take("stdout"), ...this.take("stderr")];
  }

  private take(stream: OutputChunk["stream"]): ExecutionLog[] {
    if (this.partialBytes[stream] === 0) return [];
    const bytes = Buffer.concat(this.partial[stream]);
    this.partial[stream] = [];
    this.partialBytes[stream] = 0;
    return [{ Type: TYPE[stream], Line: bytes.toString("utf8") }];
  }
}

/**
 * A finished execution's output as Bacalhau's CompletedStreamer gives it: its stdout's lines, then
 * its stderr's, each with a newline (the last one too, as Bacalhau's line scanner writes it).
 */
export function completedLines(stdout: string, stderr: string): ExecutionLog[] {
  const split = (text: string, type: ExecutionLogType): ExecutionLog[] => {
    if (text === "") return [];
    const parts = text.split("\n");
    if (parts.at(-1) === "") parts.pop();
    return parts.map((line) => ({ Type: type, Line: `${line}\n` }));
  };
  return [...split(stdout, 1), ...split(stderr, 2)];
}
