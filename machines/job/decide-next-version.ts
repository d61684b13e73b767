import { accept, refuse, type Decision } from "../decider.ts";
import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { RERUN_MESSAGE } from "./evolve-job.ts";
import type { JobCommand, JobRefusal } from "./job-commands.ts";
import type { JobSpec } from "./job-spec.ts";
import { jobSpecDiff } from "./job-spec-diff.ts";
import type { JobState, JobStateName } from "./job-state.ts";
import { jobAtVersion, versionNotFound } from "./job-versions.ts";
import { invalidJob } from "./spec-fields.ts";

/** A job that exists: what an update or a rerun replaces. */
export type ExistingJob = JobState & { readonly spec: JobSpec; readonly state: JobStateName };

type Put = Extract<JobCommand, { type: "Put" }>;
type Rerun = Extract<JobCommand, { type: "Rerun" }>;

/**
 * Bacalhau's update of a job submitted again under its name (SubmitJob, ≥ 1.8), in any state, ended
 * ones included: the new spec becomes its next version and it is Pending again. Refused, changing
 * nothing: an invalid spec (every problem), another name or namespace, an unchanged spec unless
 * forced (Bacalhau's message and hint), and another Type (Bacalhau lists it in the diff and keeps
 * the old one; Shoal says so instead of running what was not asked).
 */
export function decideUpdate(command: Put, job: ExistingJob): Decision<JobEvent, JobRefusal> {
  const { submission } = command;
  if (!submission.ok) return refuse(invalidJob(submission.problems));
  const before = job.spec;
  const after = submission.spec;
  if (after.Name !== before.Name || after.Namespace !== before.Namespace)
    return refuse({ code: "Conflict", message: "cannot change job name or namespace during update" });
  if (after.Type !== before.Type) {
    const message = `a job's type cannot change: ${before.Name} is a ${before.Type} job; submit the ${after.Type} job under another name`;
    return refuse({ code: "Invalid", message, problems: [{ path: "Type", message }] });
  }
  // One token, one submission: its retry answers the version it made and stores nothing; another spec is refused.
  const made = command.token === undefined ? undefined : job.tokens?.[command.token];
  if (made !== undefined) {
    const spec = jobAtVersion(job, made)?.spec;
    if (spec !== undefined && jobSpecDiff(spec, after) === "") return accept([], "a retry of a stored submission");
    return refuse({
      code: "Conflict",
      message: `IdempotencyToken ${JSON.stringify(command.token)} was used for another job (${job.jobId})`,
    });
  }
  const diff = jobSpecDiff(before, after);
  if (diff === "" && !command.force) {
    return refuse({
      code: "Invalid",
      message: `no changes detected for new job spec. Job Name: '${before.Name}', Job Id: '${job.jobId}'`,
      problems: [],
      hint: "Use the --force flag to override this warning",
    });
  }
  return accept(
    [
      {
        type: "JobUpdated",
        data: {
          JobID: job.jobId,
          Previous: job.state,
          Version: job.version + 1,
          Job: after,
          Diff: diff,
          Forced: command.force,
          Warnings: submission.warnings,
          ...(command.token === undefined ? {} : { IdempotencyToken: command.token }),
        },
      },
    ],
    "job updated",
  );
}

/**
 * Bacalhau's rerun: the spec of the version asked for (0: the current one) runs again as the job's
 * next version. A version that was Pending or Queued when it was last the job's (the current one:
 * now) is not rerunnable, as Bacalhau's IsRerunnable says.
 */
export function decideRerun(command: Rerun, job: ExistingJob): Decision<JobEvent, JobRefusal> {
  const chosen = jobAtVersion(job, command.version);
  if (chosen?.spec === undefined || chosen.state === undefined)
    return refuse({ code: "NotFound", message: versionNotFound(job.jobId, command.version) });
  if (chosen.state === "Pending" || chosen.state === "Queued") {
    return refuse({
      code: "Conflict",
      message: `cannot rerun job in state ${chosen.state}`,
      hint: "try to use the job run command instead of the job rerun command",
    });
  }
  return accept(
    [
      {
        type: "JobRerun",
        data: {
          JobID: job.jobId,
          Previous: job.state,
          Version: job.version + 1,
          FromVersion: chosen.version,
          Job: chosen.spec,
          Reason: command.reason || RERUN_MESSAGE,
        },
      },
    ],
    "job rerun",
  );
}
