import { LIMIT_KEYS, jobLimitsProblems, type JobLimits } from "../../machines/job/job-limits.ts";
import type { JobDefaults } from "../../machines/job/job-defaults.ts";
import { problemText, validateJobSubmission } from "../actors/job-submission/validate-job-submission.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { StartupError } from "../errors/startup-error.ts";

/**
 * `JobLimits.*` from config as the job's rules take them. Limits looser than the work protocol
 * carries, or defaults the limits refuse, stop start-up naming the key: a job must never be
 * accepted that no node can be sent, nor refused for a default it did not choose.
 */
export function jobLimitsOf(config: ShoalConfig, defaults: JobDefaults): JobLimits {
  const entries = Object.entries(LIMIT_KEYS).map(([name, key]) => [name, config[key]]);
  const limits = Object.fromEntries(entries) as unknown as JobLimits;
  const problems = jobLimitsProblems(limits);
  if (problems.length === 0) {
    for (const type of ["batch", "ops", "service", "daemon"] as const) {
      // The smallest job of each type, with nothing but its type's defaults.
      const job = { Type: type, Tasks: [{ Name: "t", Engine: { Type: "docker", Params: { Image: "i" } } }] };
      const checked = validateJobSubmission(job, { jobId: "j-limits", defaults, limits });
      if (!checked.ok) {
        const Type = `${type[0]?.toUpperCase()}${type.slice(1)}`;
        problems.push(...checked.problems.map((p) => `JobDefaults.${Type}.Task: ${problemText(p)}`));
      }
    }
  }
  if (problems.length > 0) throw new StartupError(`invalid job limits: ${problems.join("; ")}`);
  return limits;
}
