import type { JobState } from "./job-state.ts";

/**
 * The job as it stood at `version` (0: its current one), as Bacalhau's job store answers a version:
 * that version's spec, and its state, message, revision and modify time when the next one replaced
 * it. Undefined when the job has no such version.
 */
export function jobAtVersion(job: JobState, version: number): JobState | undefined {
  if (version === 0 || version === job.version) return job.spec === undefined ? undefined : job;
  const record = job.versions.find((v) => v.version === version);
  if (record === undefined) return undefined;
  const { spec, state, message, revision, modifyTime, warnings } = record;
  return { ...job, spec, state, message, revision, modifyTime, warnings, version };
}

/** Every version of the job, oldest first, the current one last (none before it is submitted). */
export function jobVersions(job: JobState): JobState[] {
  if (job.spec === undefined) return [];
  return [...job.versions.map((v) => jobAtVersion(job, v.version)!), job];
}

/** Bacalhau's message for a version a job does not have (its job store's ErrJobVersionNotFound). */
export const versionNotFound = (jobId: string, version: number): string =>
  `job version ${version} not found for job ${jobId}`;
