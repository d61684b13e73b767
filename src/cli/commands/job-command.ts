import { commandHelp } from "../help/command-help.ts";
import { UsageError } from "../usage-error.ts";

type Command = (args: string[]) => Promise<number>;

interface JobSubcommand {
  /** Loaded only when it runs, as main.ts loads commands. */
  readonly load: () => Promise<Command>;
}

/** `shoal job <subcommand>`, as Bacalhau's `bacalhau job …`; their help is the tree's (help/command-tree.ts). */
const SUBCOMMANDS: Readonly<Record<string, JobSubcommand>> = {
  run: {
    load: async () => (await import("./job-run-command.ts")).jobRunCommand,
  },
  list: {
    load: async () => (await import("./job-list-command.ts")).jobListCommand,
  },
  describe: {
    load: async () => (await import("./job-describe-command.ts")).jobDescribeCommand,
  },
  executions: {
    load: async () => (await import("./job-executions-command.ts")).jobExecutionsCommand,
  },
  history: {
    load: async () => (await import("./job-history-command.ts")).jobHistoryCommand,
  },
  stop: {
    load: async () => (await import("./job-stop-command.ts")).jobStopCommand,
  },
  logs: {
    load: async () => (await import("./job-logs-command.ts")).jobLogsCommand,
  },
  versions: {
    load: async () => (await import("./job-versions-command.ts")).jobVersionsCommand,
  },
  rerun: {
    load: async () => (await import("./job-rerun-command.ts")).jobRerunCommand,
  },
  validate: {
    load: async () => (await import("./job-validate-command.ts")).jobValidateCommand,
  },
  get: {
    load: async () => (await import("./job-get-command.ts")).jobGetCommand,
  },
};

export async function jobCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(commandHelp("shoal job"));
    return sub === undefined ? 2 : 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (subcommand === undefined) throw new UsageError(`unknown job command "${sub}"`, "shoal job --help");
  return (await subcommand.load())(rest);
}
