/** One stream per entity; the prefix before the first '-' is the category ($ce-node in EventStoreDB). */
export const NODE_CATEGORY = "node";

export const nodeStream = (nodeId: string): string => `${NODE_CATEGORY}-${nodeId}`;

export function categoryOf(stream: string): string {
  const dash = stream.indexOf("-");
  return dash === -1 ? stream : stream.slice(0, dash);
}

export function entityIdOf(stream: string): string {
  const dash = stream.indexOf("-");
  return dash === -1 ? "" : stream.slice(dash + 1);
}

export const JOB_CATEGORY = "job";
export const EXECUTION_CATEGORY = "execution";

/** `job-j-<uuid>`: the category before the first '-', the job's id (itself `j-…`) after it. */
export const jobStream = (jobId: string): string => `${JOB_CATEGORY}-${jobId}`;
export const executionStream = (executionId: string): string => `${EXECUTION_CATEGORY}-${executionId}`;
