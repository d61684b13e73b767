import type { JobJson } from "../job-shapes.ts";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { NAMESPACE_OPTION } from "../job-options.ts";
import { jobVersionFlag } from "../job-version-flag.ts";
import { jobLookupPath } from "../job-lookup-path.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printJobLogs } from "../print-job-logs.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  "execution-id": { type: "string", short: "e" },
  version: { type: "string", short: "v" },
  tail: { type: "string", short: "t" },
  follow: { type: "boolean", short: "f" },
  raw: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  ...NAMESPACE_OPTION,
} as const;

const HELP_REF = "shoal job logs --help";

/**
 * `shoal job logs JOB_ID [--namespace NS] [--execution-id ID] [-v|--version N] [--tail N] [-f|--follow] [--raw]`:
 * reads the logs route without the WebSocket upgrade (its NDJSON, streamed; docs/jobs.md, Logs) and prints each
 * line as it comes, stdout's to stdout and stderr's to stderr, made printable as every other
 * command's output (a job's output is anyone's text), or with --raw as the job wrote it. 0 at the
 * end of the stream; an error the server sends (in the stream or as an HTTP error) is thrown as an
 * ApiError.
 */
export async function jobLogsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job logs"));
    return 0;
  }
  const idOrName = oneJobId(positionals, "logs", HELP_REF);
  if (values.tail !== undefined && !/^[0-9]{1,5}$/.test(values.tail))
    throw new UsageError(`--tail must be a number of lines, got ${values.tail}`, HELP_REF);
  const version = values.version;
  const jobVersion = version === undefined ? undefined : jobVersionFlag(version, HELP_REF);
  const api = apiClientFrom(values);
  // Finds the credential the API takes (and says which were tried) and an unknown job, before the stream; the logs
  // route then reads the job by the id a name (in --namespace) or a short id resolved to.
  const { Job: job } = await api.request<{ Job: JobJson }>("GET", jobLookupPath(idOrName, values.namespace));
  await printJobLogs(api, job.ID, {
    executionId: values["execution-id"],
    jobVersion,
    tail: values.tail,
    follow: values.follow ?? false,
    raw: values.raw ?? false,
  });
  return 0;
}
