import { type IncomingMessage, request } from "node:http";
import { type SseMessage, sseMessages } from "../../src/cli/sse-reader.ts";

/** An HTTP client of an event stream, as a test drives it: what it received, and whether it reads. */
export interface SseClient {
  readonly status: number;
  readonly response: IncomingMessage;
  /** Every message received so far (data messages and the last `resume`). */
  readonly messages: SseMessage[];
  /** Everything received, comments included, as text. */
  text(): string;
  /** Resolves when the server ended the stream or the connection closed (only once it reads). */
  readonly ended: Promise<void>;
  /** A paused client starts reading. */
  resume(): void;
  /** Resolves once `done(messages)` holds; rejects when the stream ends before. */
  until(done: (messages: readonly SseMessage[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * Opens `url` as an event stream. With `paused`, the client reads nothing (its socket fills) until `resume()`.
 */
export function openSse(
  url: string,
  options: { readonly headers?: Record<string, string>; readonly paused?: boolean } = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream", ...options.headers } }, (response) => {
      const messages: SseMessage[] = [];
      const chunks: string[] = [];
      const watchers = new Set<() => void>();
      let finished = false;
      response.setEncoding("utf8");
      async function* raw(): AsyncGenerator<string> {
        for await (const chunk of response) {
          chunks.push(chunk as string);
          yield chunk as string;
        }
      }
      let start: () => void = () => {};
      const started = new Promise<void>((go) => (start = go));
      const ended = (async () => {
        await started;
        try {
          for await (const m of sseMessages(raw())) {
            messages.push(m);
            for (const w of watchers) w();
          }
        } catch {
          // A connection the server dropped ends the stream like an end.
        } finally {
          finished = true;
          for (const w of watchers) w();
        }
      })();
      if (!options.paused) start();
      resolve({
        resume: () => start(),
        status: response.statusCode ?? 0,
        response,
        messages,
        text: () => chunks.join(""),
        ended,
        until(done, timeoutMs = 30_000) {
          return new Promise<void>((ok, fail) => {
            const check = () => {
              if (done(messages)) {
                watchers.delete(check);
                clearTimeout(timer);
                ok();
              } else if (finished) {
                watchers.delete(check);
                clearTimeout(timer);
                fail(new Error(`the stream ended after ${messages.length} messages`));
              }
            };
            const timer = setTimeout(() => {
              watchers.delete(check);
              fail(new Error(`timed out with ${messages.length} messages`));
            }, timeoutMs);
            watchers.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.once("error", reject);
    req.end();
  });
}

/** The positions of the data messages (the `resume` message left out). */
export const dataIds = (messages: readonly SseMessage[]): number[] =>
  messages.filter((m) => m.event === undefined).map((m) => Number(m.id));
