// Only what every command needs is imported here: each command's module (and with it the
// store, NATS, Fastify, Effect …) is loaded when that command runs, so `shoal --help` and
// `shoal node list` start fast (test/e2e/cli-compiled.test.ts; npm run bench:cli).
import { COMMAND_TREE } from "./help/command-tree.ts";
import { allOptions, commandLine, findCommand, optionSpellings, type FoundCommand } from "./help/find-command.ts";
import { helpText } from "./help/help-text.ts";
import { didYouMean } from "./help/suggest.ts";
import { printable } from "./printable.ts";
import { UsageError } from "./usage-error.ts";

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  serve: async () => (await import("./commands/serve-command.ts")).serveCommand,
  compute: async () => (await import("./commands/compute-command.ts")).computeCommand,
  devstack: async () => (await import("./commands/devstack-command.ts")).devstackCommand,
  node: async () => (await import("./commands/node-command.ts")).nodeCommand,
  job: async () => (await import("./commands/job-command.ts")).jobCommand,
  events: async () => (await import("./commands/events-command.ts")).eventsCommand,
  audit: async () => (await import("./commands/audit-command.ts")).auditCommand,
  docker: async () => (await import("./commands/docker-run-command.ts")).dockerCommand,
  sim: async () => (await import("./commands/sim-command.ts")).simCommand,
  leaf: async () => (await import("./commands/leaf-command.ts")).leafCommand,
  "nats-operator": async () => (await import("./commands/nats-operator-command.ts")).natsOperatorCommand,
  tls: async () => (await import("./commands/tls-command.ts")).tlsCommand,
  agent: async () => (await import("./commands/agent-command.ts")).agentCommand,
  config: async () => (await import("./commands/config-command.ts")).configCommand,
  version: async () => (await import("./commands/version-command.ts")).versionCommand,
};

/** Failures whose message is the whole story: printed without a stack trace. */
const EXPECTED_ERRORS = new Set(["StartupError", "ApiError", "ChainSourceError", "ComputeAgentError", "DownloadError"]);

/** The command argv names, for the options a typo is compared with. */
let found: FoundCommand | undefined;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    // The client's version alone, at once: no request, nothing else loaded.
    case "--version": {
      const { SHOAL_VERSION } = await import("../version.ts");
      console.log(`shoal v${SHOAL_VERSION}`);
      return 0;
    }
    case undefined:
    case "-h":
    case "--help":
      console.log(helpText([COMMAND_TREE]));
      return command === undefined ? 2 : 0;
    case "help": {
      const own = args[0] === "-h" || args[0] === "--help";
      console.log(helpText(known(findCommand(COMMAND_TREE, own ? [command] : args), 0).path));
      return 0;
    }
    case "completion":
      return completion(args);
  }
  found = known(findCommand(COMMAND_TREE, argv), 1);
  const { path, rest } = found;
  // Help is the tree's, before any command module loads; after `--` the words are a container's command.
  const own = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (own.includes("--help") || own.includes("-h")) {
    console.log(helpText(path));
    return 0;
  }
  // A group without its subcommand is a usage error: its help, where errors go.
  if (path.at(-1)!.subcommands?.length) {
    console.error(helpText(path));
    return 2;
  }
  const load = Object.hasOwn(COMMANDS, path[1]!.name) ? COMMANDS[path[1]!.name] : undefined;
  if (load === undefined) throw new Error(`shoal ${path[1]!.name} is in the command tree but not wired in main.ts`);
  return (await load())(argv.slice(1));
}

/** The command the words name, or a usage error naming the closest ones when the first unknown word is a typo. */
function known(at: FoundCommand, least: number): FoundCommand {
  const spec = at.path.at(-1)!;
  const word = at.rest[0];
  if (word === undefined || (at.path.length > least && (word.startsWith("-") || !spec.subcommands?.length))) return at;
  const names = (spec.subcommands ?? []).map((s) => s.name);
  const what = at.path.length === 1 ? "command" : `${commandLine(at.path.slice(1))} command`;
  const help = at.path.length === 1 ? "shoal --help" : `${commandLine(at.path)} --help`;
  throw new UsageError(`unknown ${what} "${word}"${didYouMean(word, names)}`, help);
}

async function completion(args: string[]): Promise<number> {
  const { bashCompletion, zshCompletion } = await import("./help/completion-script.ts");
  const [shell, ...extra] = args;
  if (shell === "-h" || shell === "--help") {
    console.log(helpText(findCommand(COMMAND_TREE, ["completion"]).path));
    return 0;
  }
  if ((shell !== "bash" && shell !== "zsh") || extra.length > 0)
    throw new UsageError(
      `shoal completion takes bash or zsh${shell === undefined ? "" : `, got "${args.join(" ")}"`}`,
      "shoal completion --help",
    );
  process.stdout.write(shell === "bash" ? bashCompletion(COMMAND_TREE) : zshCompletion(COMMAND_TREE));
  return 0;
}

/** `Unknown option '--wiat'` from parseArgs, with the command's closest options. */
function optionHint(message: string): string {
  const option = /^Unknown option '(-{1,2}[^'=]+)/.exec(message)?.[1];
  if (option === undefined || found === undefined) return "";
  return didYouMean(option, allOptions(found.path.at(-1)!).flatMap(optionSpellings));
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    // Messages may carry text from the API, a node or the command line: never raw to the terminal.
    const message = printable((e as Error)?.message ?? String(e), { multiline: true });
    const badArgument = (e as { badArgument?: boolean } | undefined)?.badArgument === true;
    if (e instanceof UsageError || badArgument || (e as { code?: string }).code?.startsWith?.("ERR_PARSE_ARGS")) {
      const hint = printable(optionHint((e as Error).message), { multiline: true });
      // parseArgs' own refusals and the API's name no help: the command argv named is the one to read.
      const help = e instanceof UsageError ? e.help : found ? `${commandLine(found.path)} --help` : "shoal --help";
      console.error(`Error: ${message}${hint}\nRun '${help}' for usage.`);
      process.exit(2);
    }
    // By name: importing the classes would load the modules this file keeps lazy.
    const name = (e as Error)?.name;
    if (name === "ConfigError") console.error(`Config error: ${message}`);
    else if (EXPECTED_ERRORS.has(name)) console.error(`Error: ${message}`);
    else console.error(printable((e as Error)?.stack ?? String(e), { multiline: true }));
    process.exit(1);
  },
);
