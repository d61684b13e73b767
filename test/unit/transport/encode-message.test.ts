import { describe, expect, it } from "vitest";
import { ProtocolError, encodeMessage, unpack } from "../../../src/transport/codec.ts";
import { MAX_MESSAGE_BYTES } from "../../../src/transport/messages.ts";
import { validateWorkMessage } from "../../../src/transport/decode-work.ts";

const work = (parameters: string[]) => ({
  Type: "RunExecution",
  MessageID: "m-1",
  NodeID: "n-1",
  ExecutionID: "e-1",
  JobID: "j-1",
  Task: {
    Engine: { Type: "docker", Image: "busybox:1", Parameters: parameters },
    Resources: { CPUMillis: 500, MemoryBytes: 512_000_000 },
    Network: "None",
    ExecutionTimeout: 0,
  },
});

describe("a message to send", () => {
  it("is refused before it is sent when its receiver would refuse it for its size", () => {
    // Within every field's own cap, too large as a whole.
    const large = validateWorkMessage(work(Array.from({ length: 1000 }, () => "x".repeat(100))));
    expect(() => encodeMessage(large)).toThrow(ProtocolError);
    expect(() => encodeMessage(large)).toThrow(/^message is \d+ bytes; the limit is 65536$/);
  });

  it("within the size is encoded as the receiver reads it", () => {
    const small = validateWorkMessage(work(["echo", "hi"]));
    const bytes = encodeMessage(small);
    expect(bytes.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(unpack(bytes)).toEqual(small);
  });
});
