import type { Body } from "./job-api-client.ts";
import { waitFor } from "./shoal-process.ts";

/** Where a wait reads a job (GET /jobs/{id} with executions and history) and its executions. */
export interface JobReader {
  job(jobId: string): Promise<Body>;
}
export interface ExecutionReader {
  executions(jobId: string): Promise<Body[]>;
}

export const inState =
  (...states: readonly string[]) =>
  (job: Body): boolean =>
    states.includes(job.Job?.State?.StateType);
export const executionsOf = (job: Body): Body[] => job.Executions?.Items ?? [];
/** The first execution is in Bacalhau's compute state `stateType` (6 Running, 9 Completed, 11 Cancelled…). */
export const firstExecutionIn =
  (stateType: number) =>
  (executions: readonly Body[]): boolean =>
    executions[0]?.ComputeState?.StateType === stateType;

/** Until the job, as read, passes `check`: the job as last read. */
export async function until(
  jobs: JobReader,
  jobId: string,
  check: (job: Body) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<Body> {
  let last: Body = {};
  await waitFor(
    async () => check((last = await jobs.job(jobId))),
    timeoutMs,
    () =>
      `${what}; job ${JSON.stringify(last.Job?.State)}, executions ${JSON.stringify(executionsOf(last).map((e) => [e.NodeID, e.ComputeState]))}`,
  );
  return last;
}

/** Until the job is in one of `states`: the job as last read. */
export const settled = (jobs: JobReader, jobId: string, states: readonly string[], timeoutMs = 60_000): Promise<Body> =>
  until(jobs, jobId, inState(...states), `job ${jobId} in ${states.join("/")}`, timeoutMs);

/** Until the job's executions (GET /jobs/{id}/executions) pass `check`: them as last read. */
export async function untilExecutions(
  jobs: ExecutionReader,
  jobId: string,
  check: (executions: Body[]) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<Body[]> {
  let last: Body[] = [];
  await waitFor(
    async () => check((last = await jobs.executions(jobId))),
    timeoutMs,
    () => `${what}; executions of ${jobId} ${JSON.stringify(last.map((e) => [e.NodeID, e.ComputeState]))}`,
  );
  return last;
}
