import { describe, expect, it } from "vitest";
import { ProtocolError } from "../../../src/transport/codec.ts";
import { validateWorkMessage } from "../../../src/transport/decode-work.ts";
import {
  askForBidMessage,
  cancelExecutionMessage,
  runExecutionMessage,
} from "../../../src/transport/work-message-builders.ts";
import type { WorkTask } from "../../../src/transport/work-messages.ts";

const task: WorkTask = {
  Engine: { Type: "docker", Image: "shoal-test:latest", Parameters: ["true"] },
  Resources: { CPUMillis: 100, MemoryBytes: 64 * 1024 * 1024 },
  Network: "None",
  ExecutionTimeout: 0,
};
const work = { nodeId: "n1", executionId: "e-1", jobId: "j-1", task };

describe("work message builders", () => {
  it("make the NCL message a node decodes, with the MessageID given", () => {
    const ask = askForBidMessage(work, "m-1");
    expect(ask).toEqual({
      Type: "AskForBid",
      MessageID: "m-1",
      NodeID: "n1",
      ExecutionID: "e-1",
      JobID: "j-1",
      Task: task,
    });
    expect(validateWorkMessage(ask)).toEqual(ask);
    const run = runExecutionMessage(work, "m-2");
    expect(run).toEqual({ ...ask, Type: "RunExecution", MessageID: "m-2" });
    expect(validateWorkMessage(run)).toEqual(run);
    const cancel = cancelExecutionMessage("n1", "e-1", "job stopped", "m-3");
    expect(cancel).toEqual({
      Type: "CancelExecution",
      MessageID: "m-3",
      NodeID: "n1",
      ExecutionID: "e-1",
      Reason: "job stopped",
    });
    expect(validateWorkMessage(cancel)).toEqual(cancel);
  });

  it("refuse a malformed message with the field named, so it is never sent", () => {
    expect(() => askForBidMessage({ ...work, executionId: "x-1" }, "m-1")).toThrow(ProtocolError);
    expect(() => askForBidMessage({ ...work, executionId: "x-1" }, "m-1")).toThrow(/ExecutionID/);
    expect(() => runExecutionMessage({ ...work, jobId: "" }, "m-1")).toThrow(/JobID/);
    expect(() => cancelExecutionMessage("n1", "e-1", "r".repeat(5000), "m-1")).toThrow(/Reason/);
  });
});
