import type { JobHistoryJson, JobJson } from "./job-shapes.ts";
import { mayPass, type ApiClient } from "./api-client.ts";
import { historyEventText, shortId, TERMINAL_JOB_STATES, timeOnlyMilli } from "./job-cells.ts";

export interface FollowOptions {
  readonly timeoutMs: number;
  /** Each new history entry, oldest first, as it is recorded. */
  readonly onEntry?: (entry: JobHistoryJson) => void;
  readonly pollMs?: number;
}

export type FollowResult = { readonly job: JobJson; readonly timedOut: boolean };

/**
 * Bacalhau's progress columns (cmd/util/printer): time, execution, topic, event, at fixed widths since lines come one
 * by one.
 */
const COLUMNS = [12, 10, 15] as const;
const line = (cells: readonly string[]) =>
  cells
    .map((c, i) => (i < COLUMNS.length ? c.padEnd(COLUMNS[i] as number) : c))
    .join("  ")
    .trimEnd();
export const PROGRESS_HEADER = line(["TIME", "EXEC. ID", "TOPIC", "EVENT"]);

export function progressLine(entry: JobHistoryJson): string {
  const at = new Date(entry.Time);
  return line([
    timeOnlyMilli(at),
    entry.ExecutionID ? shortId(entry.ExecutionID) : "",
    entry.Event.Topic,
    historyEventText(entry.Event),
  ]);
}

const isLongRunning = (job: JobJson) => job.Type === "service" || job.Type === "daemon";
const HISTORY_PAGE = 100;

/**
 * Waits until the job is terminal (a service or daemon job: until it runs, since it never ends),
 * giving each history entry as it appears. Polls the job and its history (after the last SeqNum
 * seen), as Bacalhau's progress printer polls its history. The job is read before the history,
 * so the entries of the state that ends the wait are read too. The API out of reach for a moment
 * (an orchestrator restarting) is waited out until the timeout.
 */
export async function followJob(api: ApiClient, jobId: string, options: FollowOptions): Promise<FollowResult> {
  const deadline = Date.now() + options.timeoutMs;
  const path = `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}`;
  let after: number | undefined;
  let job: JobJson | undefined;
  for (;;) {
    try {
      job = (await api.request<{ Job: JobJson }>("GET", path)).Job;
      for (;;) {
        const q = new URLSearchParams({ limit: String(HISTORY_PAGE) });
        if (after !== undefined) q.set("next_token", String(after));
        const page = await api.request<{ Items: JobHistoryJson[]; NextToken: string }>("GET", `${path}/history?${q}`);
        for (const entry of page.Items) {
          options.onEntry?.(entry);
          after = entry.SeqNum;
        }
        if (page.NextToken === "" || page.Items.length === 0) break;
      }
      if (TERMINAL_JOB_STATES.has(job.State.StateType) || (isLongRunning(job) && job.State.StateType === "Running"))
        return { job, timedOut: false };
    } catch (e) {
      if (!mayPass(e) || job === undefined) throw e;
    }
    if (Date.now() >= deadline) return { job, timedOut: true };
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(options.pollMs ?? 500, Math.max(0, deadline - Date.now()))),
    );
  }
}

/** Why a job that ended without completing did so: its state and the state's message (Bacalhau's reason). */
export function jobEndText(job: JobJson): string {
  return `job ${job.ID} ${job.State.StateType}${job.State.Message ? `: ${job.State.Message}` : ""}`;
}
