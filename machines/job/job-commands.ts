import type { JobSpec } from "./job-spec.ts";
import type { SpecProblem } from "./spec-fields.ts";

/**
 * A submitted job as the host's validation left it (src/actors/job-submission/: the schema's
 * shape, the host's JobLimits and JobDefaults): the spec to store with its warnings, or every
 * problem with it.
 */
export type JobSubmission =
  | { readonly ok: true; readonly spec: JobSpec; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly problems: readonly SpecProblem[] };

/**
 * What may be asked of a job. The job's id is the entity's (the host assigns `j-<uuid>`); the time is the command's
 * `meta.now`. Queue, HoldUpdate, ResumeUpdate, Run, Complete and Fail come from the scheduler and the workflows;
 * Submit, Put, Rerun and Stop from a user; TimeOutQueue and TimeOutJob from the job's own deadlines.
 */
export type JobCommand =
  /** The submitted models.Job, validated by the host before it asks (the job's id is its default Name). */
  | { readonly type: "Submit"; readonly submission: JobSubmission; readonly token?: string }
  /**
   * Bacalhau's SubmitJob of a named job: submits it if it does not exist, else updates it to the
   * submitted spec as its next version. An unchanged spec is refused unless `force`. `token`: the submission's
   * IdempotencyToken, one submission: the version it made is answered again for the same spec, another spec refused.
   */
  | { readonly type: "Put"; readonly submission: JobSubmission; readonly force: boolean; readonly token?: string }
  /** Runs the spec of `version` (0: the current one) again as the job's next version; `reason` is the user's. */
  | { readonly type: "Rerun"; readonly version: number; readonly reason: string }
  /**
   * No node can take the job now; `reason` is the scheduler's account (Bacalhau's "not enough nodes
   * to run job. …").
   */
  /** `wanted`: how many executions the job still lacks (a new count is a new account of the wait). */
  | { readonly type: "Queue"; readonly reason: string; readonly wanted?: number }
  /**
   * The job's current version cannot be placed until executions of its earlier versions stop, which run on meanwhile;
   * `reason` is the scheduler's account of which nodes lack what.
   */
  | { readonly type: "HoldUpdate"; readonly reason: string }
  /** The held version found room: its placement goes on. */
  | { readonly type: "ResumeUpdate" }
  /** An execution of the job is to run (desired Running). */
  | { readonly type: "Run" }
  | { readonly type: "Complete" }
  | { readonly type: "Fail"; readonly reason: string }
  | { readonly type: "Stop"; readonly reason: string }
  | { readonly type: "TimeOutQueue" }
  | { readonly type: "TimeOutJob" };

export type JobCommandType = JobCommand["type"];

/**
 * Why a command was refused, with what the user may do about it (`hint`). The host maps these onto
 * its closed set of errors (Invalid → BadRequest).
 */
export type JobRefusal =
  | { readonly code: "NotFound"; readonly message: string }
  | { readonly code: "Conflict"; readonly message: string; readonly hint?: string }
  | {
      readonly code: "Invalid";
      readonly message: string;
      /** Each problem of the spec with its field path (none when the spec is valid but refused as a whole). */
      readonly problems: readonly SpecProblem[];
      readonly hint?: string;
    };
