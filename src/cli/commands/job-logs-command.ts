import { parseArgs } from "node:util";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { jobVersionFlag } from "../job-version-flag.ts";
import { oneJobId } from "../one-job-id.ts";
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
} as const;

/**
 * `shoal job logs JOB_ID [--execution-id ID] [-v|--version N] [--tail N] [-f|--follow] [--raw]`: reads the logs
 * route without the WebSocket upgrade (its NDJSON, streamed; docs/jobs.md, Logs) and prints each
 * line as it comes, stdout's to stdout and stderr's to stderr, made printable as every other
 * command's output (a job's output is anyone's text), or with --raw as the job wrote it. 0 at the
 * end of the stream; an error the server sends (in the stream or as an HTTP error) is thrown as an
 * ApiError.
 */
export async function jobLogsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(commandHelp("shoal job logs"));
    return 0;
  }
  const jobId = oneJobId(positionals, "logs");
  if (values.tail !== undefined && !/^[0-9]{1,5}$/.test(values.tail))
    throw new UsageError(`--tail must be a number of lines, got ${values.tail}`);
  const version = values.version;
  const jobVersion = version === undefined ? undefined : jobVersionFlag(version, "shoal job logs --help");
  const api = apiClientFrom(values);
  // Finds the credential the API takes (and says which were tried) and an unknown job, before the stream.
  await api.request("GET", `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}`);
  await printJobLogs(api, jobId, {
    executionId: values["execution-id"],
    jobVersion,
    tail: values.tail,
    follow: values.follow ?? false,
    raw: values.raw ?? false,
  });
  return 0;
}
