import { apiClientFrom } from "../api-client-from-flags.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
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
  readonly summary: string;
  /** What the command prints and needs, under its usage line. */
  readonly about: string;
  readonly path: string;
  readonly fallback: OutputFormat;
  readonly examples: readonly string[];
  /** The table, for the commands whose default is one. */
  readonly table?: (body: unknown) => string;
}

/** `shoal agent <subcommand>`, as Bacalhau's `bacalhau agent …`: each reads one of the agent routes. */
const SUBCOMMANDS: Readonly<Record<string, AgentSubcommand>> = {
  alive: {
    summary: "whether the orchestrator is alive (exit 1, saying why, when it is not)",
    about:
      "Asks GET /api/v1/agent/alive. Prints Status: OK while NATS, JetStream and the event store are usable;\n" +
      "otherwise the error says which is not, and the exit code is 1. Needs no credentials.",
    path: "/api/v1/agent/alive",
    fallback: "yaml",
    examples: ["shoal agent alive", "shoal agent alive --api-host https://orchestrator.example:1234 -o json"],
  },
  node: {
    summary: "the orchestrator's own node info (id, type, labels, version)",
    about: "Asks GET /api/v1/agent/node (needs read:agent, or anonymous read).",
    path: "/api/v1/agent/node",
    fallback: "yaml",
    examples: ["shoal agent node", "shoal agent node -o json"],
  },
  version: {
    summary: "the orchestrator's build version",
    about: "Asks GET /api/v1/agent/version (needs no credentials). `shoal version` prints this CLI's beside it.",
    path: "/api/v1/agent/version",
    fallback: "table",
    examples: ["shoal agent version", "shoal agent version -o yaml"],
    table: (body) => {
      const v = body as BuildVersionJson;
      return formatTable(
        ["MAJOR", "MINOR", "GITVERSION", "GOOS", "GOARCH"],
        [[v.Major, v.Minor, v.GitVersion, v.GOOS, v.GOARCH]],
      );
    },
  },
  config: {
    summary: "the orchestrator's effective configuration, secrets redacted",
    about:
      "Asks GET /api/v1/agent/config (needs read:agent; never anonymous). Prints the configuration the\n" +
      "orchestrator runs with, by section as Bacalhau's `agent config` does, with its secrets shown as\n" +
      "<redacted>; secrets aside, the YAML is a config file Shoal reads (--config). `shoal config list`\n" +
      "shows this machine's configuration and where each value came from, without a server.",
    path: "/api/v1/agent/config",
    fallback: "yaml",
    examples: ["shoal agent config", "shoal agent config -o json | jq .Orchestrator.NodeManager"],
  },
};

export const OPTIONS = { ...JOB_COMMON_OPTIONS, output: { type: "string", short: "o" } } as const;

export function agentHelp(): string {
  const lines = Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(8)}  ${s.summary}`);
  return `Usage: shoal agent <command> [options]

Asks the orchestrator about itself, as Bacalhau's \`bacalhau agent …\`.

Commands:
${lines.join("\n")}

Run 'shoal agent <command> --help' for a command's options. All take -o/--output and the
API options (--api-host, --api-port, …).

Examples:
  shoal agent alive
  shoal agent config -o json`;
}

function subcommandHelp(name: string, s: AgentSubcommand): string {
  const formats = s.table === undefined ? "yaml|json" : "table|yaml|json";
  return `Usage: shoal agent ${name} [options]

${s.about}

Options:
  -o, --output ${formats}
                           output format (default ${s.fallback})

${API_OPTIONS_HELP}

Examples:
${s.examples.map((e) => `  ${e}`).join("\n")}`;
}

export async function agentCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(agentHelp());
    return sub === undefined ? 2 : 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (subcommand === undefined) throw new UsageError(`unknown agent command "${sub}"`, "shoal agent --help");
  const helpRef = `shoal agent ${sub} --help`;
  const { values, positionals } = parseCommandArgs(rest, OPTIONS, helpRef);
  if (values.help) {
    console.log(subcommandHelp(sub, subcommand));
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
