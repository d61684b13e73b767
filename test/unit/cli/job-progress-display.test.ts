import { describe, expect, it } from "vitest";
import { progressDisplay, type ProgressStream } from "../../../src/cli/job-progress-display.ts";
import type { JobHistoryJson } from "../../../src/cli/job-shapes.ts";

function stream(isTTY: boolean, columns = 200): ProgressStream & { text: string } {
  return {
    isTTY,
    columns,
    text: "",
    write(text: string) {
      this.text += text;
      return true;
    },
  };
}

let seq = 0;
const entry = (at: string, executionId: string | undefined, topic: string, message: string): JobHistoryJson =>
  ({
    SeqNum: ++seq,
    Type: executionId ? "ExecutionLevel" : "JobLevel",
    JobID: "j-1",
    ...(executionId ? { ExecutionID: executionId } : {}),
    Event: { Topic: topic, Message: message, Details: {}, Timestamp: at },
    Time: at,
  }) as unknown as JobHistoryJson;

const E1 = "e-11111111-1111-1111-1111-111111111111";
const STEPS = [
  entry("2026-11-30T05:00:00.000Z", undefined, "Submission", "Job submitted"),
  entry("2026-11-30T05:00:00.100Z", E1, "Scheduling", "Requested execution on n-1"),
  entry("2026-11-30T05:00:01.000Z", E1, "Execution", "Running"),
  entry("2026-11-30T05:00:02.000Z", undefined, "State Update", "Completed"),
];

describe("job run's progress display", () => {
  it("off a terminal: the header, then a line per entry as it is recorded, nothing redrawn", () => {
    const out = stream(false);
    const display = progressDisplay(out);
    for (const e of STEPS) display.entry(e);
    const lines = out.text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME +EXEC\. ID +TOPIC +EVENT$/);
    expect(lines.slice(1).map((l) => l.slice(14).trim())).toEqual([
      "Submission       Job submitted",
      "e-11111111  Scheduling       Requested execution on n-1",
      "e-11111111  Execution        Running",
      "State Update     Completed",
    ]);
    expect(out.text).not.toContain("\u001b");
  });

  it("on a terminal: one row for the job and one per execution, each its latest entry, redrawn in place", () => {
    const out = stream(true);
    const display = progressDisplay(out);
    for (const e of STEPS) display.entry(e);
    // The first frame is drawn as it is; each later one goes back up over the last (header + rows) and clears.
    const redraws = out.text
      .split("\u001b[J")
      .slice(0, -1)
      .map((frame) => Number(frame.slice(frame.lastIndexOf("\u001b[") + 2, -1)));
    expect(redraws).toEqual([2, 3, 3]);
    const last = (out.text.split("\u001b[J").at(-1) as string).trimEnd().split("\n");
    expect(last).toHaveLength(3);
    expect(last[1]).toMatch(/e-11111111 +Execution +Running$/);
    expect(last[2]).toMatch(/State Update +Completed$/);
  });

  it("on a terminal: rows cut to its width, so that none wraps; the API's text made printable", () => {
    const out = stream(true, 60);
    progressDisplay(out).entry(
      entry("2026-11-30T05:00:00.000Z", undefined, "Submission", `x\u001b[2J${"y".repeat(80)}`),
    );
    for (const line of out.text.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(59);
    expect(out.text).toContain("x\\u001b[2J");
  });
});
