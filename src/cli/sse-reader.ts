/** One Server-Sent Events message: its id (when it had one), its name (when it had one) and its data lines joined. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * The messages of a text/event-stream as they arrive, parsed as the HTML standard says (fields `id`, `event`, `data`;
 * a line starting with `:` is a comment; a blank line ends a message; CR, LF and CRLF all end lines). A message with
 * no data line is not dispatched, as in a browser; its id still becomes the last event id, which `onLastId` hears of
 * whenever a message ends (what a reconnection sends as Last-Event-ID).
 */
export async function* sseMessages(
  chunks: AsyncIterable<string | Buffer>,
  onLastId?: (id: string) => void,
): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let pending = "";
  let id: string | undefined;
  let event: string | undefined;
  let data: string[] = [];
  for await (const chunk of chunks) {
    pending += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = pending.search(/\r\n|\r|\n/);
      // A CR at the end of what arrived may be the first half of a CRLF: wait for more.
      if (end === -1 || (pending[end] === "\r" && end === pending.length - 1)) break;
      const line = pending.slice(0, end);
      pending = pending.slice(end + (pending.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") {
        if (id !== undefined) onLastId?.(id);
        if (data.length > 0) yield { id, event, data: data.join("\n") };
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id" && !value.includes("\0")) id = value;
    }
  }
}
