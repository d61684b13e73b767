import type { ClusterEvent } from "../api/types.ts";

/**
 * The events of the job and of its executions, however many it has. The stream's entity filter takes at most 10 ids
 * and cannot name executions not created yet (a daemon's on a node that joins, a retry): the page follows the jobs'
 * and executions' events and keeps those of its job, its executions, and executions created for it.
 */
export const JOB_LIVE_FILTER = "category=job,execution";
const EXECUTION_STREAM = "execution-";

export function isJobEvent(jobId: string, executionIds: ReadonlySet<string>, event: ClusterEvent): boolean {
  if (event.stream === `job-${jobId}`) return true;
  if (!event.stream.startsWith(EXECUTION_STREAM)) return false;
  return (
    executionIds.has(event.stream.slice(EXECUTION_STREAM.length)) ||
    (event.type === "ExecutionCreated" && event.data["JobID"] === jobId)
  );
}
