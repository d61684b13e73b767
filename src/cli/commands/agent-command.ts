import { apiClientFrom } from "../api-client-from-flags.ts";
import { commandHelp } from "../help/command-help.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { outputFormat, print, printData, type OutputFormat } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { formatTable } from "../table.ts";
import { UsageError } from "../usage-error.ts";

/** What GET /api/v1/agent/version answers (Bacalhau's BuildVersionInfo fields Shoal fills). */
export interface BuildVersionJson {
  readonly Major: string;
  readonly Minor: string;
  readonly GitVersion: string;
  readonly GOOS: string;
  readonly GOARCH: string;
}

interface AgentSubcommand {
  readonly path: string;
  readonly fallback: OutputFormat;
  /** The table, for the commands whose default is one. */
  readonly table?: (body: unknown) => string;
}

/** `shoal agent <subcommand>`, as Bacalhau's `bacalhau agent …`: each reads one of the agent routes. */
const SUBCOMMANDS: Readonly<Record<string, AgentSubcommand>> = {
  alive: {
    path: "/api/v1/agent/alive",
    fallback: "yaml",
  },
  node: {
    path: "/api/v1/agent/node",
    fallback: "yaml",
  },
  version: {
    path: "/api/v1/agent/version",
    fallback: "table",
    table: (body) => {
      const v = body as BuildVersionJson;
      return formatTable(
        ["MAJOR", "MINOR", "GITVERSION", "GOOS", "GOARCH"],
        [[v.Major, v.Minor, v.GitVersion, v.GOOS, v.GOARCH]],
      );
    },
  },
  config: {
    path: "/api/v1/agent/config",
    fallback: "yaml",
  },
};

export const OPTIONS = { ...JOB_COMMON_OPTIONS, output: { type: "string", short: "o" } } as const;

export async function agentCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(commandHelp("shoal agent"));
    return sub === undefined ? 2 : 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (subcommand === undefined) throw new UsageError(`unknown agent command "${sub}"`, "shoal agent --help");
  const helpRef = `shoal agent ${sub} --help`;
  const { values, positionals } = parseCommandArgs(rest, OPTIONS, helpRef);
  if (values.help) {
    console.log(commandHelp(`shoal agent ${sub}`));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`shoal agent ${sub} takes no arguments`, helpRef);
  const format = outputFormat(values.output, subcommand.fallback, helpRef);
  if (format === "table" && subcommand.table === undefined)
    throw new UsageError(`shoal agent ${sub} prints yaml or json`, helpRef);
  const body = await apiClientFrom(values).request<unknown>("GET", subcommand.path);
  if (format === "table") print(subcommand.table!(body));
  else await printData(format, body);
  return 0;
}
