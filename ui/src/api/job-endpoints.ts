import type { ApiClient, Query } from "./client.ts";
import { historyPages } from "./endpoints.ts";
import { ndjsonLines } from "./ndjson.ts";
import type { Execution, Job, JobHistoryEntry, LogMessage, Page } from "./types.ts";

const JOBS = "/api/v1/orchestrator/jobs";
const jobPath = (id: string) => `${JOBS}/${encodeURIComponent(id)}`;

/** The job list's query: limit, next_token, order_by, reverse, namespace, labels (docs/jobs.md, List). */
export const listJobs = (client: ApiClient, query: Query) => client.get<Page<Job>>(JOBS, query);

export const getJob = async (client: ApiClient, id: string) => (await client.get<{ Job: Job }>(jobPath(id))).Job;

/** A job's executions, oldest first (a page of the API's largest: a job has as many as its Count and retries). */
export const jobExecutions = (client: ApiClient, id: string) =>
  client.get<Page<Execution>>(`${jobPath(id)}/executions`, { limit: "1000" });

/** A job's history (its own and its executions' entries), oldest first, up to HISTORY_SHOWN. */
export const jobHistory = (client: ApiClient, id: string) =>
  historyPages<JobHistoryEntry>(client, `${jobPath(id)}/history`);

/** Submits a job (Bacalhau's models.Job as parsed from the text); a refused spec is a 400 with Details.problems. */
export const submitJob = (client: ApiClient, job: unknown) =>
  client.put<{ JobID: string; Warnings: readonly string[] }>(JOBS, { Job: job });

/** Stops a job; the reason is its state message and its history's Reason. */
export const stopJob = (client: ApiClient, id: string, reason: string) =>
  client.delete<{ EvaluationID: string }>(jobPath(id), { reason });

/**
 * Reads a job's logs as NDJSON (a WebSocket cannot carry the Authorization header), calling `onMessage` per line as
 * it comes; with `follow`, until the execution ends. Resolves when the stream ends, rejects on a refusal.
 */
export async function readJobLogs(
  client: ApiClient,
  id: string,
  follow: boolean,
  signal: AbortSignal,
  onMessage: (message: LogMessage) => void,
): Promise<void> {
  const res = await client.stream(`${jobPath(id)}/logs`, { follow: String(follow) }, "application/x-ndjson", signal);
  for await (const line of ndjsonLines(res)) onMessage(JSON.parse(line) as LogMessage);
}
