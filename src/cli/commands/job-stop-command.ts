import type { JobJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { TERMINAL_JOB_STATES } from "../job-cells.ts";
import { JOB_COMMON_OPTIONS, NAMESPACE_OPTION } from "../job-options.ts";
import { outputFormat, print, printData, printError } from "../output-format.ts";
import { jobLookupPath } from "../job-lookup-path.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job stop --help";
/** Bacalhau's CLI sends this reason. */
const DEFAULT_REASON = "Stopped at user request";

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...NAMESPACE_OPTION,
  reason: { type: "string" },
  quiet: { type: "boolean" },
} as const;

export async function jobStopCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job stop"));
    return 0;
  }
  const id = oneJobId(positionals, "stop", HELP_REF);
  const format = outputFormat(values.output, "table", HELP_REF);
  const say = (text: string) => {
    if (format === "table" && !values.quiet) print(text);
  };
  const api = apiClientFrom(values);
  say("Checking job status\n");
  const { Job: job } = await api.request<{ Job: JobJson }>("GET", jobLookupPath(id, values.namespace));
  if (TERMINAL_JOB_STATES.has(job.State.StateType)) {
    if (!values.quiet)
      printError(`Error: Job is already in a terminal state.\nThe current state is: ${job.State.StateType}`);
    return 1;
  }
  say("Stopping job");
  // The id as the server knows it (a short id or a name given here resolves to it on the GET above).
  const res = await api.request<{ EvaluationID: string }>(
    "DELETE",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(job.ID)}?${new URLSearchParams({ reason: values.reason ?? DEFAULT_REASON })}`,
  );
  if (format !== "table") {
    if (!values.quiet) await printData(format, res);
  } else
    say(
      res.EvaluationID
        ? `\nJob stop successfully submitted with evaluation ID: ${res.EvaluationID}`
        : `\nJob stop successfully submitted. Job ID: ${job.ID}`,
    );
  return 0;
}
