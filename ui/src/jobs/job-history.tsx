import { HISTORY_SHOWN } from "../api/endpoints.ts";
import type { JobHistoryEntry } from "../api/types.ts";
import { Time } from "../common/format.tsx";
import { computeStateName } from "./job-format.tsx";

/** "Queued → Running" (job) or "BidAccepted → Running" (execution): what the entry changed. */
function change(entry: JobHistoryEntry): string | undefined {
  if (entry.JobState !== undefined) return `${entry.JobState.Previous} → ${entry.JobState.New}`;
  if (entry.ExecutionState !== undefined)
    return `${computeStateName(entry.ExecutionState.Previous)} → ${computeStateName(entry.ExecutionState.New)}`;
  return undefined;
}

/**
 * The job's and its executions' history, newest first: what happened, who caused it (Details.Actor), why
 * (Details.Reason, a stop's reason) and when.
 */
export function JobHistory(props: { readonly entries: readonly JobHistoryEntry[]; readonly complete: boolean }) {
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <ol class="timeline" reversed>
        {[...props.entries].reverse().map((entry) => {
          const { Actor, Reason } = entry.Event.Details;
          return (
            <li key={entry.SeqNum}>
              <span class="event-type">{entry.Event.Message || entry.Event.Topic}</span>{" "}
              {entry.ExecutionID === undefined ? null : <code class="muted">{entry.ExecutionID}</code>}{" "}
              {change(entry) === undefined ? null : <span class="muted">({change(entry)})</span>}{" "}
              {Actor === undefined ? null : <span class="by">by {Actor}</span>} <Time at={entry.Time} />
              {Reason === undefined ? null : <p class="reason">{Reason}</p>}
            </li>
          );
        })}
      </ol>
      {props.complete ? null : (
        <p class="muted">
          Only the first {HISTORY_SHOWN} entries are shown; <code>shoal job history {"<id>"}</code> lists them all.
        </p>
      )}
    </section>
  );
}
