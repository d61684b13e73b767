import { buildVersion } from "../../version.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { outputFormat, print, printData, printError } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { formatTable } from "../table.ts";
import { UsageError } from "../usage-error.ts";
import type { BuildVersionJson } from "./agent-command.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal version --help";

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  output: { type: "string", short: "o" },
  client: { type: "boolean" },
} as const;

export async function versionCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal version"));
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
