import { buildVersion } from "../../version.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
import { outputFormat, print, printData, printError } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { formatTable } from "../table.ts";
import { UsageError } from "../usage-error.ts";
import type { BuildVersionJson } from "./agent-command.ts";

const HELP_REF = "shoal version --help";

export const VERSION_HELP = `Usage: shoal version [options]

Prints this CLI's version and the orchestrator's (GET /api/v1/agent/version, which needs no
credentials). When the orchestrator cannot be reached, the client's version is still printed,
a note on stderr says why the server's is missing, and the exit code is 0. \`shoal --version\`
prints the client's alone.

Options:
  --client                 the client's version only: no request to the orchestrator
  -o, --output table|json|yaml
                           table (default); json and yaml print Bacalhau's shape:
                           {clientVersion: {…}, serverVersion: {…}}

${API_OPTIONS_HELP}

Examples:
  shoal version
  shoal version --client -o json
  shoal version --api-host https://orchestrator.example:1234`;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  output: { type: "string", short: "o" },
  client: { type: "boolean" },
} as const;

export async function versionCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(VERSION_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError("shoal version takes no arguments", HELP_REF);
  const format = outputFormat(values.output, "table", HELP_REF);
  const client = buildVersion();
  // Bad flags or config are the caller's to fix (outside the try); what the server did or did not answer is a note.
  const api = values.client ? undefined : apiClientFrom(values);
  let server: BuildVersionJson | undefined;
  try {
    server = await api?.request<BuildVersionJson>("GET", "/api/v1/agent/version");
  } catch (e) {
    printError(`Note: the server's version is unknown: ${(e as Error).message}`);
  }
  if (format !== "table") {
    await printData(format, { clientVersion: client, ...(server === undefined ? {} : { serverVersion: server }) });
    return 0;
  }
  if (values.client) print(formatTable(["CLIENT"], [[client.GitVersion]]));
  else print(formatTable(["CLIENT", "SERVER"], [[client.GitVersion, server?.GitVersion ?? "-"]]));
  return 0;
}
