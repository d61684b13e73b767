import type { JobDefaults } from "./job-defaults.ts";
import type { JobLimits } from "./job-limits.ts";
import type { SpecProblem } from "./validate-job-submission.ts";

/**
 * What may be asked of a job. The job's id is the entity's (the host assigns `j-<uuid>`); the
 * time is the command's `meta.now`. Queue, Run, Complete and Fail come from the scheduler and the
 * workflows; Stop from a user; TimeOutQueue and TimeOutJob from the job's own deadlines.
 */
export type JobCommand =
  /**
   * `job`: the submitted models.Job as decoded (JSON or YAML), validated here with the host's
   * defaults and limits (Shoal's own defaults where the host gives none).
   */
  | { readonly type: "Submit"; readonly job: unknown; readonly defaults: JobDefaults; readonly limits?: JobLimits }
  /**
   * No node can take the job now; `reason` is the scheduler's account (Bacalhau's "not enough nodes
   * to run job. …").
   */
  | { readonly type: "Queue"; readonly reason: string }
  /** An execution of the job is to run (desired Running). */
  | { readonly type: "Run" }
  | { readonly type: "Complete" }
  | { readonly type: "Fail"; readonly reason: string }
  | { readonly type: "Stop"; readonly reason: string }
  | { readonly type: "TimeOutQueue" }
  | { readonly type: "TimeOutJob" };

export type JobCommandType = JobCommand["type"];

/** Why a command was refused. The host maps these onto its closed set of errors (Invalid → BadRequest). */
export type JobRefusal =
  | { readonly code: "NotFound"; readonly message: string }
  | { readonly code: "Conflict"; readonly message: string }
  | { readonly code: "Invalid"; readonly message: string; readonly problems: readonly SpecProblem[] };
