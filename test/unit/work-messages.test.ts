import { describe, expect, it } from "vitest";
import { endReport } from "../../src/compute/execution-runner.ts";
import { encode, ProtocolError } from "../../src/transport/codec.ts";
import { validateExecutionReport, validateWorkMessage } from "../../src/transport/decode-work.ts";
import { MAX_MESSAGE_BYTES } from "../../src/transport/messages.ts";
import { MAX_REPORTED_OUTPUT, MAX_REPORTED_REASON } from "../../src/transport/work-messages.ts";

const id = `e-${"a".repeat(36)}`;

describe("work messages", () => {
  it("an end's report carries at most MAX_REPORTED_OUTPUT of each stream, says the cut, and never splits a character", () => {
    const stdout = "x".repeat(MAX_REPORTED_OUTPUT - 1) + "😀" + "tail";
    const report = endReport({
      executionId: id,
      state: "Completed",
      reason: "exited",
      runOutput: {
        STDOUT: stdout,
        StdoutTruncated: false,
        STDERR: "short",
        StderrTruncated: true,
        ExitCode: 0,
        ErrorMsg: "",
      },
      stdoutBytes: 9000,
      stderrBytes: 2_000_000,
    });
    expect(report).toMatchObject({
      Type: "ExecutionCompleted",
      RunOutput: { StdoutTruncated: true, STDERR: "short", StderrTruncated: true },
    });
    const out = (report as { RunOutput: { STDOUT: string } }).RunOutput.STDOUT;
    expect(out).toBe("x".repeat(MAX_REPORTED_OUTPUT - 1));
  });

  it("the largest report still fits in one message", () => {
    const wide = "€".repeat(MAX_REPORTED_OUTPUT); // 3 bytes each in UTF-8
    const report = validateExecutionReport({
      Type: "ExecutionFailed",
      MessageID: "m".repeat(128),
      NodeID: "n".repeat(128),
      ExecutionID: `e-${"a".repeat(96)}`,
      Reason: "€".repeat(MAX_REPORTED_REASON),
      Cause: "c".repeat(32),
      RunOutput: {
        STDOUT: wide,
        StdoutTruncated: true,
        STDERR: wide,
        StderrTruncated: true,
        ExitCode: -1,
        ErrorMsg: "€".repeat(MAX_REPORTED_REASON),
      },
    });
    expect(encode(report).length).toBeLessThan(MAX_MESSAGE_BYTES);
  });

  it("a start carries at most 32 details of the container's limits, and the largest still fits in one message", () => {
    const entry = (i: number) => [`${String(i).padStart(2, "0")}${"k".repeat(62)}`, "€".repeat(256)];
    const details = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => entry(i)));
    const started = (Details: unknown) => ({
      Type: "ExecutionStarted",
      MessageID: "m".repeat(128),
      NodeID: "n".repeat(128),
      ExecutionID: `e-${"a".repeat(96)}`,
      Details,
    });
    expect(encode(validateExecutionReport(started(details(32)))).length).toBeLessThan(MAX_MESSAGE_BYTES);
    expect(() => validateExecutionReport(started(details(33)))).toThrow(/Details.*at most 32 entries/s);
    expect(() => validateExecutionReport(started({ "HostConfig.PidsLimit": 1024 }))).toThrow(/Details/);
    const { Details: _none, ...bare } = started(undefined);
    expect(validateExecutionReport(bare)).toEqual(bare);
  });

  it("refuses a message naming the field that is wrong, for the type it claims", () => {
    expect(() =>
      validateWorkMessage({ Type: "CancelExecution", MessageID: "m", NodeID: "n1", ExecutionID: "x-1", Reason: "r" }),
    ).toThrow(ProtocolError);
    expect(() =>
      validateWorkMessage({ Type: "CancelExecution", MessageID: "m", NodeID: "n1", ExecutionID: "x-1", Reason: "r" }),
    ).toThrow(/ExecutionID/);
    expect(() =>
      validateWorkMessage({
        Type: "CancelExecution",
        MessageID: "m",
        NodeID: "n1",
        ExecutionID: id,
        Reason: "r",
        Extra: 1,
      }),
    ).toThrow(/Extra/);
    expect(() => validateWorkMessage({ Type: "RunExecution" })).toThrow(/MessageID/);
    expect(() => validateWorkMessage(["RunExecution"])).toThrow(
      "Type must be one of AskForBid, RunExecution, CancelExecution (got none)",
    );
    expect(
      validateWorkMessage({ Type: "CancelExecution", MessageID: "m", NodeID: "n1", ExecutionID: id, Reason: "r" }),
    ).toMatchObject({ ExecutionID: id });
  });
});
