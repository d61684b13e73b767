import { EventSource } from "eventsource";
import { useEffect, useRef, useState } from "preact/hooks";
import { NO_BROWSER_CREDENTIALS } from "../api/client.ts";
import { EVENT_STREAM_PATH } from "../api/endpoints.ts";
import type { ClusterEvent } from "../api/types.ts";
import type { Session } from "../session/session.tsx";
import { coalescedRefresh } from "./coalesced-refresh.ts";

/** How the page keeps itself current. */
export type LiveMode = "stream" | "reconnecting" | "polling";

const POLL_MS = 5000;

/**
 * Calls `refresh` whenever events matching `filter` (the event stream's query: `category=node&entity=n-1`) are
 * stored, coalesced (coalescedRefresh: one read for a burst, at most one a second, none while one is under way: a
 * `refresh` that returns a promise is under way until it settles). The stream needs read:history; without it, the
 * page is refreshed every 5 s instead. A browser's own EventSource cannot send the Authorization header, so this is
 * the `eventsource` package with a fetch that adds it; it reconnects by itself, resuming after the last event it
 * received. `accept`, when given, picks among the events the filter lets through (what the stream's filters cannot
 * say: the executions of one job).
 */
export function useLiveRefresh(
  session: Session,
  filter: string,
  refresh: () => unknown,
  accept?: (event: ClusterEvent) => boolean,
): LiveMode {
  const streams = session.can("read:history");
  const [mode, setMode] = useState<LiveMode>(streams ? "stream" : "polling");
  const latest = useRef(refresh);
  latest.current = refresh;
  const accepts = useRef(accept);
  accepts.current = accept;

  useEffect(() => {
    if (!streams) {
      setMode("polling");
      const timer = setInterval(() => latest.current(), POLL_MS);
      return () => clearInterval(timer);
    }
    const coalesced = coalescedRefresh(() => latest.current());
    const headers = session.client.headers();
    const source = new EventSource(`${EVENT_STREAM_PATH}?${filter}`, {
      fetch: (url, init) =>
        fetch(url, { ...init, credentials: NO_BROWSER_CREDENTIALS, headers: { ...init.headers, ...headers } }),
    });
    const soon = coalesced.request;
    // The stream starts at its present: what was stored between the page's first read and the stream's start (a
    // job that fails at once, say) is read again once it is open.
    source.onopen = () => {
      setMode("stream");
      soon();
    };
    source.onerror = () => setMode("reconnecting");
    source.onmessage = (message: MessageEvent<string>) => {
      if (accepts.current === undefined || accepts.current(JSON.parse(message.data) as ClusterEvent)) soon();
    };
    return () => {
      source.close();
      coalesced.stop();
    };
  }, [session, streams, filter]);

  return mode;
}

/**
 * Says how the page is kept current, for the page's status line. `failed`: the page's last read failed, so what it
 * shows is not current whatever the stream does (the page says why beside it).
 */
export function LiveStatus(props: { readonly mode: LiveMode; readonly failed?: boolean }) {
  const text = props.failed
    ? "Not current: the last read failed."
    : props.mode === "stream"
      ? "Live: updated as events are stored."
      : props.mode === "reconnecting"
        ? "Live updates interrupted: reconnecting…"
        : "Refreshed every 5 s: live updates need the read:history capability.";
  return (
    <p class={`live live-${props.failed ? "failed" : props.mode}`} role="status">
      {text}
    </p>
  );
}
