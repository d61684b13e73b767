import type { JobHistoryJson } from "./job-shapes.ts";
import { PROGRESS_HEADER, progressLine } from "./job-progress.ts";
import { printableCell } from "./printable.ts";

/** Where the progress goes: stderr, or a stand-in with the same few members in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export interface ProgressDisplay {
  /** A history entry, as it is recorded. */
  entry(entry: JobHistoryJson): void;
}

const UP_AND_CLEAR = (lines: number) => `\u001b[${lines}A\u001b[J`;

/**
 * A job's progress while `job run` waits. On a terminal, Bacalhau's live table: one row for the job and one per
 * execution, each showing its latest entry, redrawn in place (each row cut to the terminal's width, so that none wraps
 * and the redraw lands where the last one began). Elsewhere (a file, a pipe, CI) every entry is a line of its own, as
 * it is recorded: a log keeps the whole story.
 */
export function progressDisplay(stream: ProgressStream): ProgressDisplay {
  // What the API recorded is made printable line by line; the display's own escape sequences are written as they are.
  const line = (e: JobHistoryJson) => printableCell(progressLine(e));
  if (!stream.isTTY) {
    stream.write(`${PROGRESS_HEADER}\n`);
    return { entry: (e) => void stream.write(`${line(e)}\n`) };
  }
  const rows = new Map<string, JobHistoryJson>();
  let drawn = 0;
  return {
    entry(e) {
      rows.set(e.ExecutionID ? e.ExecutionID : "job", e);
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      const lines = [PROGRESS_HEADER, ...liveRows(rows).map(line)].map((l) => l.slice(0, width));
      stream.write(`${drawn > 0 ? UP_AND_CLEAR(drawn) : ""}${lines.join("\n")}\n`);
      drawn = lines.length;
    },
  };
}

/** Oldest first; the job's row before an execution's at the same instant, as Bacalhau orders them (by topic). */
function liveRows(rows: ReadonlyMap<string, JobHistoryJson>): JobHistoryJson[] {
  return [...rows.values()].sort((a, b) => {
    const at = Date.parse(a.Time) - Date.parse(b.Time);
    return at !== 0 ? at : a.Event.Topic.localeCompare(b.Event.Topic);
  });
}
