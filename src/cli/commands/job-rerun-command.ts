import { apiClientFrom } from "../api-client-from-flags.ts";
import { JOB_SUBMIT_OPTIONS, NAMESPACE_OPTION } from "../job-options.ts";
import { RUN_SETTINGS_OPTIONS, runSettingsFrom, watchJob } from "../job-submission.ts";
import { jobVersionFlag } from "../job-version-flag.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { takeBooleanFlag } from "../take-boolean-flag.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job rerun --help";

const { force: _force, ...RERUN_SETTINGS } = RUN_SETTINGS_OPTIONS;

export const OPTIONS = {
  ...JOB_SUBMIT_OPTIONS,
  ...RERUN_SETTINGS,
  version: { type: "string", short: "v" },
  reason: { type: "string" },
  ...NAMESPACE_OPTION,
} as const;

interface RerunAnswer {
  readonly JobID: string;
  readonly JobVersion: number;
}

/**
 * `shoal job rerun ID [--version N] [--reason TEXT]`: Bacalhau's `job rerun` (PUT /jobs/{id}/rerun), the spec of the
 * version asked for (default: the current one) run again as the job's next version; then, as `job run`, its progress
 * until it ends (--wait=false: at once).
 */
export async function jobRerunCommand(args: string[]): Promise<number> {
  const { args: rest, value: wait } = takeBooleanFlag(args, "wait", HELP_REF);
  const { values, positionals } = parseCommandArgs(rest, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job rerun"));
    return 0;
  }
  const id = oneJobId(positionals, "rerun", HELP_REF);
  const settings = runSettingsFrom(values, wait, HELP_REF);
  const version = values.version === undefined ? 0 : jobVersionFlag(values.version, HELP_REF);
  const api = apiClientFrom(values);
  const answer = await api.request<RerunAnswer>("PUT", `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}/rerun`, {
    JobVersion: version,
    ...(values.reason ? { Reason: values.reason } : {}),
    ...(values.namespace ? { Namespace: values.namespace } : {}),
  });
  const said = `Job successfully rerun. Job ID: ${answer.JobID}, Job Version: ${answer.JobVersion}`;
  return watchJob(api, answer.JobID, said, settings);
}
