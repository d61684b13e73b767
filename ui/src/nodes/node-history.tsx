import { HISTORY_SHOWN } from "../api/endpoints.ts";
import type { ClusterEvent } from "../api/types.ts";
import { Time, actorName } from "../common/format.tsx";

/** The node's events, newest first: what happened, who did it, why, and when. */
export function NodeHistory(props: {
  readonly events: readonly ClusterEvent[];
  /** False: the node has more events than a page shows. */
  readonly complete: boolean;
}) {
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <ol class="timeline" reversed>
        {[...props.events].reverse().map((event) => (
          <li key={event.id}>
            <span class="event-type">{event.type}</span> <span class="by">by {actorName(event.metadata.actor)}</span>{" "}
            <Time at={event.time} />
            {event.metadata.reason === undefined ? null : <p class="reason">{event.metadata.reason}</p>}
          </li>
        ))}
      </ol>
      {props.complete ? null : (
        <p class="muted">
          Only the first {HISTORY_SHOWN} events are shown; <code>shoal node history {"<id>"}</code> lists them all.
        </p>
      )}
    </section>
  );
}
