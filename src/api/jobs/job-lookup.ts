import { ShoalError, notFound } from "../../errors/shoal-error.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { JobSpec } from "../../../machines/job/job-spec.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import { jobAtVersion, versionNotFound } from "../../../machines/job/job-versions.ts";

export type SubmittedJob = JobState & { readonly spec: JobSpec };

/** Bacalhau's default namespace: where a name is looked up when the caller names none. */
const DEFAULT_NAMESPACE = "default";
const SHOWN_MATCHES = 3;

/**
 * A 400, as Bacalhau's MultipleJobsFound says it (its 500 would blame the server for the caller's ambiguity): for a
 * name or an id prefix several jobs, or executions, share.
 */
export const ambiguous = (message: string, matches: readonly string[], hint = "Use the full job ID") =>
  new ShoalError({
    kind: "BadRequest",
    message,
    hint,
    details: { matches: matches.slice(0, SHOWN_MATCHES) },
  });

/** The first few of the ids an ambiguous name or prefix matches, for its message. */
export const shown = (ids: readonly string[]) =>
  ids.slice(0, SHOWN_MATCHES).join(", ") + (ids.length > SHOWN_MATCHES ? ", ..." : "");

/**
 * The job a path's `{id}` means, as Bacalhau resolves it (jobstore GetJobByIDOrName): its full
 * id; else its name in `namespace` (default `default`); else a unique prefix of its id, such as
 * the short form `j-1a2b3c4d` Bacalhau's CLI prints. An exact id always wins, and Shoal looks it
 * up first. Names are not unique in Shoal (nor in Bacalhau before v1.8): a name several jobs
 * share is refused like an ambiguous prefix, listing them, never resolved to one of them.
 */
export function resolveJob(views: JobViews, idOrName: string, namespace: string | undefined): SubmittedJob {
  const exact = views.job(idOrName);
  if (exact?.spec) return exact as SubmittedJob;
  const ns = namespace || DEFAULT_NAMESPACE;
  const named = views.index.idsNamed(ns, idOrName);
  if (named.length > 1) {
    throw ambiguous(`multiple jobs are named ${idOrName} in namespace ${ns}: [${shown(named)}]`, named);
  }
  let id = named[0];
  if (id === undefined) {
    const matches = views.index.idsWithPrefix(idOrName, SHOWN_MATCHES + 1);
    if (matches.length > 1) {
      throw ambiguous(`multiple jobs found for ID prefix ${idOrName}: [${shown(matches)}]`, matches);
    }
    id = matches[0];
  }
  const job = id === undefined ? undefined : views.job(id);
  if (!job?.spec)
    throw notFound(`job not found: ${idOrName} (no job has this ID, ID prefix, or name in namespace ${ns})`);
  return job as SubmittedJob;
}

/**
 * The job a path names (resolveJob) and the version of it asked for (0: its current one), as every read by version
 * needs them; a version it never had is NotFound as Bacalhau says it.
 */
export function resolveJobVersion(
  views: JobViews,
  idOrName: string,
  namespace: string | undefined,
  version: number,
): { readonly job: SubmittedJob; readonly at: SubmittedJob } {
  const job = resolveJob(views, idOrName, namespace);
  const at = jobAtVersion(job, version);
  if (at === undefined) throw notFound(versionNotFound(job.jobId, version));
  return { job, at: at as SubmittedJob };
}
