import { describe, expect, it } from "vitest";
import { sseMessages } from "../../../src/cli/sse-reader.ts";

async function* chunks(...parts: (string | Buffer)[]): AsyncGenerator<string | Buffer> {
  for (const p of parts) yield p;
}

async function read(...parts: (string | Buffer)[]) {
  const ids: string[] = [];
  const messages = [];
  for await (const m of sseMessages(chunks(...parts), (id) => ids.push(id))) messages.push(m);
  return { messages, ids };
}

describe("sseMessages", () => {
  it("parses messages split anywhere, comments skipped, the id kept until another comes", async () => {
    const text =
      ': events after 3\nid: 3\n\nid: 4\ndata: {"a":1}\n\n: keep-alive\n\ndata: no id\n\nid: 5\nevent: resume\ndata: {"after":5}\n\n';
    const whole = await read(text);
    expect(whole.messages).toEqual([
      { id: "4", event: undefined, data: '{"a":1}' },
      { id: "4", event: undefined, data: "no id" },
      { id: "5", event: "resume", data: '{"after":5}' },
    ]);
    // The id-only message is not dispatched, but is the last id (what a reconnection sends); each blank line
    // reports it again, the keep-alive's too, as a browser sets its lastEventId.
    expect(whole.ids).toEqual(["3", "4", "4", "4", "5"]);
    for (let cut = 1; cut < text.length; cut++) expect(await read(text.slice(0, cut), text.slice(cut))).toEqual(whole);
  });

  it("takes CRLF and CR line ends, a CRLF split between chunks, several data lines, and UTF-8 split in a byte", async () => {
    const euro = Buffer.from("data: €\n\n");
    expect(
      (await read("id: 1\r\ndata: a\r", "\ndata: b\r\rdata: c\n\n", euro.subarray(0, 8), euro.subarray(8))).messages,
    ).toEqual([
      { id: "1", event: undefined, data: "a\nb" },
      { id: "1", event: undefined, data: "c" },
      { id: "1", event: undefined, data: "€" },
    ]);
  });

  it("dispatches nothing for a message the stream cut short", async () => {
    expect((await read("id: 7\ndata: half")).messages).toEqual([]);
  });
});
