import type { Executor, LogChunk } from "./executor/executor.ts";

export interface ExecutionLogOptions {
  readonly follow: boolean;
  /** Only the last N lines of what was written so far; undefined: everything from the start. */
  readonly tailLines?: number;
  readonly signal?: AbortSignal;
}

/** A line longer than this counts as a line of its own (the tail's memory stays bounded by N × this). */
const MAX_TAIL_LINE_BYTES = 64 * 1024;

/**
 * An execution's output as the log protocol serves it: from its start, or only its last
 * `tailLines` lines, then (with `follow`) what it writes until it ends. A tail reads what was
 * written so far once, keeping only the last lines (per stream, in the order they came), and the
 * follow that comes after skips, per stream, the bytes that read saw: Docker gives each stream's
 * bytes in order, so nothing is given twice or missed between the two reads.
 */
export async function* executionLog(
  executor: Executor,
  executionId: string,
  options: ExecutionLogOptions,
): AsyncGenerator<LogChunk> {
  const signalOption = options.signal ? { signal: options.signal } : {};
  if (options.tailLines === undefined) {
    yield* executor.logs(executionId, { follow: options.follow, ...signalOption });
    return;
  }
  const seen = { stdout: 0, stderr: 0 };
  const keep = options.tailLines;
  const lines: LogChunk[] = [];
  const partial: Record<LogChunk["stream"], Buffer[]> = { stdout: [], stderr: [] };
  const partialBytes = { stdout: 0, stderr: 0 };
  const push = (line: LogChunk) => {
    if (keep === 0) return;
    lines.push(line);
    if (lines.length > keep) lines.shift();
  };
  const endLine = (stream: LogChunk["stream"]) => {
    if (partialBytes[stream] === 0) return;
    push({ stream, data: Buffer.concat(partial[stream]) });
    partial[stream] = [];
    partialBytes[stream] = 0;
  };
  for await (const chunk of executor.logs(executionId, { follow: false, ...signalOption })) {
    seen[chunk.stream] += chunk.data.length;
    let from = 0;
    for (;;) {
      const nl = chunk.data.indexOf(10, from);
      const end = nl === -1 ? chunk.data.length : nl + 1;
      if (end > from) {
        partial[chunk.stream].push(chunk.data.subarray(from, end));
        partialBytes[chunk.stream] += end - from;
      }
      if (nl === -1) {
        if (partialBytes[chunk.stream] > MAX_TAIL_LINE_BYTES) endLine(chunk.stream);
        break;
      }
      endLine(chunk.stream);
      from = end;
    }
  }
  endLine("stdout");
  endLine("stderr");
  yield* lines;
  if (!options.follow) return;
  const given = { stdout: 0, stderr: 0 };
  for await (const chunk of executor.logs(executionId, { follow: true, ...signalOption })) {
    const skip = seen[chunk.stream] - given[chunk.stream];
    given[chunk.stream] += chunk.data.length;
    if (skip >= chunk.data.length) continue;
    yield skip > 0 ? { stream: chunk.stream, data: chunk.data.subarray(skip) } : chunk;
  }
}
