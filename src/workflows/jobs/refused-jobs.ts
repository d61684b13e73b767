import type { Logger } from "pino";
import { isTerminalJobState, type JobState } from "../../../machines/job/job-state.ts";
import type { JobControl } from "../../actors/job-control.ts";
import { commandContext } from "../../actors/command-context.ts";

/**
 * At start-up: every stored job that is not over and that today's limits refuse (stored before
 * them, or under looser ones) fails with the reason, before anything places it or sends its work.
 * One job's trouble is logged and the rest go on: a start never dies on one entity's data (the
 * job is checked again whenever it is placed).
 */
export async function failRefusedJobs(
  jobs: Iterable<JobState>,
  control: Pick<JobControl, "jobs" | "storedJobRefusal">,
  logger: Logger,
): Promise<number> {
  const refused: { jobId: string; reason: string }[] = [];
  for (const job of jobs) {
    if (job.spec === undefined || job.state === undefined || isTerminalJobState(job.state)) continue;
    const reason = control.storedJobRefusal(job.jobId, job.spec);
    if (reason !== undefined) refused.push({ jobId: job.jobId, reason });
  }
  let failed = 0;
  for (const { jobId, reason } of refused) {
    try {
      const context = commandContext({ type: "system", id: "job-limits" }, { reason });
      await control.jobs.execute(jobId, { type: "Fail", reason }, context);
      failed++;
      logger.warn({ jobId, reason }, "a stored job breaks today's job limits: it failed");
    } catch (err) {
      logger.error({ err, jobId }, "a stored job that breaks today's limits could not be failed now; placing it will");
    }
  }
  return failed;
}
