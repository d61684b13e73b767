import { describe, expect, it } from "vitest";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { failureOf } from "../../../src/scheduler/execution-failure.ts";

const output = { Stdout: "", StdoutTruncated: false, stderr: "", StderrTruncated: false, ErrorMsg: "" };

function failed(message: string, exitCode?: number): ExecutionState {
  return {
    ...initialExecutionState("e-1"),
    nodeId: "n-1",
    computeState: "Failed",
    computeMessage: message,
    ...(exitCode === undefined ? {} : { runOutput: { ...output, ExitCode: exitCode } }),
  };
}

describe("failureOf: an execution's failure as the job's message and history say it", () => {
  it("names the execution and node once, and the exit code once", () => {
    expect(failureOf(failed("execution e-1: the command exited with code 3", 3))).toBe(
      "execution e-1 on node n-1 failed: the command exited with code 3",
    );
    expect(failureOf(failed("execution e-1 timed out: it ran past its 2s timeout and was killed", 137))).toBe(
      "execution e-1 on node n-1 failed: timed out: it ran past its 2s timeout and was killed (exit code 137)",
    );
  });

  it("says no exit code when no process exited (the executor's -1) or none was reported", () => {
    expect(failureOf(failed("image nosuch:1 is not on node n-1, and this node does not pull images", -1))).toBe(
      "execution e-1 on node n-1 failed: image nosuch:1 is not on node n-1, and this node does not pull images",
    );
    expect(failureOf(failed("bid rejected"))).toBe("execution e-1 on node n-1 failed: bid rejected");
  });

  it("an execution that ended otherwise says so, with its state when it has no message", () => {
    expect(failureOf({ ...failed(""), computeState: "Cancelled" })).toBe("execution e-1 on node n-1 ended: Cancelled");
  });
});
