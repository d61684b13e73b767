import { ApiError, type ApiClient } from "./api-client.ts";
import { followEvents } from "./follow-events.ts";
import { printable } from "./printable.ts";

/** A redraw waits this long after the event that asked for it, so that a burst of events costs one. */
const REDRAW_AFTER_MS = 200;
const CLEAR_SCREEN = "\u001b[H\u001b[2J";

export interface WatchOptions {
  /** The event categories whose events may change the list (`node`; `job,execution`). */
  readonly categories: string;
  /** The list as it is now, as printed. */
  readonly draw: () => Promise<string>;
}

/**
 * `-w/--watch` on a list: prints it, then again whenever an event of its categories is stored (the cluster's event
 * stream), until Ctrl-C, which ends it with status 0. On a terminal each page replaces the last; otherwise pages
 * follow each other, a blank line between them.
 */
export async function watchList(api: ApiClient, options: WatchOptions): Promise<number> {
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  const tty = process.stdout.isTTY === true;
  let drawn = 0;
  let timer: NodeJS.Timeout | undefined;
  let drawing: Promise<void> = Promise.resolve();
  const note = (text: string): void => void process.stderr.write(`${printable(text)}\n`);
  const redraw = async (): Promise<void> => {
    let text: string;
    try {
      text = await options.draw();
    } catch (e) {
      return note(`cannot list: ${(e as Error).message}`);
    }
    process.stdout.write(tty ? `${CLEAR_SCREEN}${text}\n` : `${drawn === 0 ? "" : "\n"}${text}\n`);
    drawn++;
  };
  const soon = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      drawing = drawing.then(redraw);
    }, REDRAW_AFTER_MS);
  };
  try {
    await followEvents(api, {
      query: new URLSearchParams({ category: options.categories }),
      after: undefined,
      // The feed's page of one: a caller the stream would refuse (no read:history) is told so at once.
      prepare: () => api.request("GET", `/api/v1/orchestrator/events?limit=1&category=${options.categories}`),
      // Drawn once the stream is open: whatever changes after the page was read comes as an event.
      onOpen: () => {
        drawing = drawing.then(redraw);
        return drawing;
      },
      onEvent: soon,
      signal: stop.signal,
      note,
    });
  } catch (e) {
    if (e instanceof ApiError && e.status === 403)
      throw new ApiError(
        e.status,
        `${e.message} (--watch follows the cluster's event stream, which needs the read:history capability)`,
        e.body,
      );
    throw e;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    clearTimeout(timer);
    await drawing;
  }
  return 0;
}
