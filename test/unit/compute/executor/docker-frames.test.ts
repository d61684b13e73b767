import { describe, expect, it } from "vitest";
import { dockerFrames } from "../../../../src/compute/executor/docker-frames.ts";

function frame(type: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

async function collect(pieces: Buffer[]): Promise<string[]> {
  const out: string[] = [];
  for await (const c of dockerFrames(pieces)) out.push(`${c.stream}:${c.data.toString()}`);
  return out;
}

describe("dockerFrames", () => {
  it("splits many frames in one read", async () => {
    expect(await collect([Buffer.concat([frame(1, "out\n"), frame(2, "err\n"), frame(1, "more")])])).toEqual([
      "stdout:out\n",
      "stderr:err\n",
      "stdout:more",
    ]);
  });

  it("joins a frame split across reads, even inside its header", async () => {
    const whole = Buffer.concat([frame(2, "hello world"), frame(1, "x")]);
    const pieces = [whole.subarray(0, 3), whole.subarray(3, 10), whole.subarray(10, 15), whole.subarray(15)];
    expect(await collect(pieces)).toEqual(["stderr:hello world", "stdout:x"]);
  });

  it("passes an empty frame and skips stream types it does not know", async () => {
    expect(
      await collect([Buffer.concat([frame(1, ""), frame(3, "system"), frame(0, "stdin"), frame(1, "ok")])]),
    ).toEqual(["stdout:", "stdout:ok"]);
  });

  it("drops an incomplete frame at the end of the stream", async () => {
    const f = frame(1, "complete");
    expect(await collect([Buffer.concat([f, frame(1, "cut").subarray(0, 9)])])).toEqual(["stdout:complete"]);
  });
});
