import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { JobLogsQuery, logsReadOf } from "../../../src/api/jobs/job-logs-route.ts";
import { LogLines, MAX_LINE_BYTES, completedLines } from "../../../src/api/jobs/log-lines.ts";
import { ShoalError } from "../../../src/errors/shoal-error.ts";

const chunk = (stream: "stdout" | "stderr", data: string | Buffer) => ({
  stream,
  data: typeof data === "string" ? Buffer.from(data) : data,
});

describe("LogLines", () => {
  it("cuts chunks into lines per stream, a line going on across chunks while the other stream's come between", () => {
    const lines = new LogLines();
    expect(lines.push(chunk("stdout", "a\nb"))).toEqual([{ Type: 1, Line: "a\n" }]);
    expect(lines.push(chunk("stderr", "x\n"))).toEqual([{ Type: 2, Line: "x\n" }]);
    expect(lines.push(chunk("stdout", "c\nd\n"))).toEqual([
      { Type: 1, Line: "bc\n" },
      { Type: 1, Line: "d\n" },
    ]);
    expect(lines.push(chunk("stderr", "tail"))).toEqual([]);
    expect(lines.flush()).toEqual([{ Type: 2, Line: "tail" }]);
    expect(lines.flush()).toEqual([]);
  });

  it("decodes a line once whole: a UTF-8 character cut between chunks comes out intact", () => {
    const bytes = Buffer.from("héllo\n");
    const lines = new LogLines();
    expect(lines.push(chunk("stdout", bytes.subarray(0, 2)))).toEqual([]);
    expect(lines.push(chunk("stdout", bytes.subarray(2)))).toEqual([{ Type: 1, Line: "héllo\n" }]);
  });

  it("gives a line without a newline in pieces once it reaches MAX_LINE_BYTES", () => {
    const lines = new LogLines();
    expect(lines.push(chunk("stdout", "x".repeat(MAX_LINE_BYTES - 1)))).toEqual([]);
    const got = lines.push(chunk("stdout", "yy"));
    expect(got).toHaveLength(1);
    expect(got[0]!.Line.length).toBe(MAX_LINE_BYTES + 1);
    expect(lines.flush()).toEqual([]);
  });
});

describe("completedLines (Bacalhau's CompletedStreamer)", () => {
  it("stdout's lines, then stderr's, each with a newline, the last one too", () => {
    expect(completedLines("a\nb", "e\n")).toEqual([
      { Type: 1, Line: "a\n" },
      { Type: 1, Line: "b\n" },
      { Type: 2, Line: "e\n" },
    ]);
    expect(completedLines("", "")).toEqual([]);
    expect(completedLines("\n", "")).toEqual([{ Type: 1, Line: "\n" }]);
  });
});

describe("the logs route's query", () => {
  it.each([
    [{}, { follow: false }],
    [{ follow: "true" }, { follow: true }],
    [{ follow: "1" }, { follow: true }],
    [{ follow: "F" }, { follow: false }],
    [{ tail: "true" }, { follow: false, tailLines: 0 }],
    [
      { tail: "T", follow: "t" },
      { follow: true, tailLines: 0 },
    ],
    [{ tail: "false" }, { follow: false }],
    [{ tail: "" }, { follow: false }],
    [{ tail: "0" }, { follow: false, tailLines: 0 }],
    [{ tail: "1" }, { follow: false, tailLines: 1 }],
    [{ tail: "10000" }, { follow: false, tailLines: 10000 }],
  ])("%j reads as %j", (query, read) => {
    expect(logsReadOf(Schema.decodeUnknownSync(JobLogsQuery)(query))).toEqual(read);
  });

  it("refuses more than 10,000 lines", () => {
    expect(() => logsReadOf({ tail: "10001" })).toThrow(ShoalError);
    expect(() => logsReadOf({ tail: "10001" })).toThrow("query parameter tail: at most 10000 lines, got 10001");
  });
});
