import { wholeNumberFlag } from "./number-flag.ts";

/** Bacalhau's `-v/--version N` of the job commands: a job version, 0 for the current one (the API's job_version). */
export const jobVersionFlag = (text: string, help: string): number =>
  wholeNumberFlag(text, "--version", 0, 999_999_999_999, help);

/** Bacalhau's `-v/--version N` and `--all-versions` of the job commands that list a job's entries. */
export const JOB_VERSIONS_OPTIONS = {
  version: { type: "string", short: "v" },
  "all-versions": { type: "boolean" },
} as const;

/**
 * Sets job_version / all_job_versions from the flags. A version other than 0 wins over --all-versions, as Bacalhau's
 * job store takes them (only a version of 0 lets every version's entries through). Returns the flags that ask for the
 * same again (for a next page's hint).
 */
export function jobVersionsQuery(
  values: { readonly version?: string | undefined; readonly "all-versions"?: boolean | undefined },
  q: URLSearchParams,
  help: string,
): string[] {
  const version = values.version === undefined ? 0 : jobVersionFlag(values.version, help);
  if (version !== 0) {
    q.set("job_version", String(version));
    return [`--version ${version}`];
  }
  if (!values["all-versions"]) return [];
  q.set("all_job_versions", "true");
  return ["--all-versions"];
}
