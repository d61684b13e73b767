import { UsageError } from "../usage-error.ts";

type Command = (args: string[]) => Promise<number>;

interface JobSubcommand {
  /** `run <file>`: the help's first column. */
  readonly usage: string;
  readonly summary: string;
  /** Loaded only when it runs, as main.ts loads commands. */
  readonly load: () => Promise<Command>;
}

/**
 * `shoal job <subcommand>`, as Bacalhau's `bacalhau job …`. One line per subcommand: the help
 * below lists exactly these, so a subcommand is in the help once it is wired here.
 */
const SUBCOMMANDS: Readonly<Record<string, JobSubcommand>> = {
  run: {
    usage: "run <file>",
    summary: "submit a job from a YAML or JSON file ('-': stdin)",
    load: async () => (await import("./job-run-command.ts")).jobRunCommand,
  },
  list: {
    usage: "list",
    summary: "list jobs",
    load: async () => (await import("./job-list-command.ts")).jobListCommand,
  },
  describe: {
    usage: "describe <id>",
    summary: "show a job, its executions and history",
    load: async () => (await import("./job-describe-command.ts")).jobDescribeCommand,
  },
  executions: {
    usage: "executions <id>",
    summary: "list a job's executions",
    load: async () => (await import("./job-executions-command.ts")).jobExecutionsCommand,
  },
  history: {
    usage: "history <id>",
    summary: "a job's and its executions' history, oldest first",
    load: async () => (await import("./job-history-command.ts")).jobHistoryCommand,
  },
  stop: {
    usage: "stop <id>",
    summary: "stop a job (its executions are cancelled)",
    load: async () => (await import("./job-stop-command.ts")).jobStopCommand,
  },
  logs: {
    usage: "logs <id> [-f] [--raw]",
    summary: "print a job's output; -f: follow it",
    load: async () => (await import("./job-logs-command.ts")).jobLogsCommand,
  },
};

export function jobHelp(): string {
  const width = Math.max(...Object.values(SUBCOMMANDS).map((s) => s.usage.length));
  const lines = Object.values(SUBCOMMANDS).map((s) => `  ${s.usage.padEnd(width)}  ${s.summary}`);
  return `Usage: shoal job <command> [options]

Commands:
${lines.join("\n")}

Run 'shoal job <command> --help' for a command's options. list, describe, executions
and history take -o table|wide|json|yaml|csv (describe: no csv), --wide, --no-style and
--hide-header; stop takes --output table|json|yaml; all take the API options (--api-host, …).`;
}

export async function jobCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(jobHelp());
    return sub === undefined ? 2 : 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (subcommand === undefined) throw new UsageError(`unknown job command "${sub}"`, "shoal job --help");
  return (await subcommand.load())(rest);
}
