import type { IncomingMessage } from "node:http";
import { ApiError, mayPass, type ApiClient } from "./api-client.ts";
import { openStreamingGet } from "./ndjson-request.ts";
import { sseMessages } from "./sse-reader.ts";

export const EVENT_STREAM_API_PATH = "/api/v1/orchestrator/events/stream";

/** Pauses between reconnections: quick after a connection that lasted, doubling up to 10 s while it keeps failing. */
const RECONNECT = { initialMs: 250, maxMs: 10_000, stableAfterMs: 30_000 };
export interface FollowOptions {
  /** The filters, as the feed takes them (no after: the stream starts at the newest event). */
  readonly query: URLSearchParams;
  readonly after: number | undefined;
  /** Each event's data (a ClusterEvent's JSON), in store order; the next is read once it settles. */
  readonly onEvent: (data: string) => Promise<void> | void;
  /**
   * Made before the first connection, again until it succeeds: a request that settles which credential the API takes
   * and refuses a bad filter as a plain answer (an unreachable API is waited for like a dropped stream).
   */
  readonly prepare?: () => Promise<unknown>;
  /** Each time the stream is open (the first time and after each reconnection). */
  readonly onOpen?: () => Promise<void> | void;
  /** Aborted: stop (Ctrl-C); resolves normally. */
  readonly signal: AbortSignal;
  /** Told of each reconnection (stderr), with the position it resumes after. */
  readonly note: (text: string) => void;
}

/** Whether the failure may pass by itself (the orchestrator restarting, a proxy, a 503): then reconnect. */
function passing(e: unknown): boolean {
  return !(e instanceof ApiError) || mayPass(e);
}

/**
 * The event stream as `shoal events --follow` and the lists' --watch read it: each event handed on as it comes; a
 * dropped connection (or the server's `resume` message) is followed by a new one that sends the last id received as
 * Last-Event-ID, so nothing is missed or seen twice. Ends when `signal` aborts; refusals (a bad filter, credentials)
 * are thrown.
 */
export async function followEvents(api: ApiClient, options: FollowOptions): Promise<void> {
  const { signal } = options;
  // Not transport's RestartBackoff: the CLI loads nothing of the server side (cli-compiled.test.ts).
  let failures = 0;
  let prepared = false;
  let lastId: string | undefined = options.after === undefined ? undefined : String(options.after);
  while (!signal.aborted) {
    const query = new URLSearchParams(options.query);
    // Before the first id: `after`, else the newest event (the server sends the start's id first thing).
    if (lastId === undefined && options.after !== undefined) query.set("after", String(options.after));
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastId !== undefined) headers["last-event-id"] = lastId;
    const opened = Date.now();
    let response: IncomingMessage | undefined;
    try {
      if (!prepared) await options.prepare?.();
      prepared = true;
      response = await openStreamingGet(api, `${EVENT_STREAM_API_PATH}?${query}`, headers, signal);
      await options.onOpen?.();
      for await (const m of sseMessages(response, (id) => (lastId = id))) {
        if (m.event === "resume") {
          options.note(`the server ended the stream (${resumeReason(m.data)}); resuming after ${lastId}`);
          continue;
        }
        if (m.event === undefined) await options.onEvent(m.data);
      }
    } catch (e) {
      if (signal.aborted) return;
      if (!passing(e)) throw e;
      options.note(`event stream: ${(e as Error).message}`);
    } finally {
      response?.destroy();
    }
    if (signal.aborted) return;
    if (Date.now() - opened >= RECONNECT.stableAfterMs) failures = 0;
    const delay = Math.min(RECONNECT.initialMs * 2 ** failures++, RECONNECT.maxMs);
    options.note(`reconnecting in ${delay} ms${lastId === undefined ? "" : ` after position ${lastId}`}`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}

function resumeReason(data: string): string {
  try {
    return String((JSON.parse(data) as { reason?: unknown }).reason ?? "no reason given");
  } catch {
    return "no reason given";
  }
}
