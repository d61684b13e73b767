// Only what every command needs is imported here: each command's module (and with it the
// store, NATS, Fastify, Effect …) is loaded when that command runs, so `shoal --help` and
// `shoal node list` start fast (test/e2e/cli-compiled.test.ts; npm run bench:cli).
import { printable } from "./printable.ts";
import { UsageError } from "./usage-error.ts";

const HELP = `shoal — event-sourced node management for compute clusters

Usage: shoal <command> [options]

Commands:
  serve       run the orchestrator (API, node manager, NATS, event store)
  compute     run a compute node agent
  devstack    run an orchestrator and N compute nodes in one process
  node        list, describe, approve, reject, delete nodes; show their history
  job         run jobs from a file; list, describe, stop them; show their executions and history
  events      the whole cluster's history, filtered by entity, type, actor and time
  audit       verify the event log's hash chain and signed checkpoints (audit verify)
  docker      run a Docker container as a job (docker run)
  sim         run N virtual compute nodes (real protocol, one connection each) for load tests
  leaf        write a leaf nats-server's configuration (holds nodes' connections near them), or revoke one
  nats-operator  make Shoal the operator of an external NATS cluster (its keys and the servers' config)
  tls         make a CA and certificates for an external NATS cluster and its clients (tls issue)
  agent       ask the orchestrator about itself: alive, node, version, config
  config      show the effective configuration and where each value came from (config list)
  version     print this CLI's version and the orchestrator's

Run 'shoal <command> --help' for a command's options.`;

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
const EXPECTED_ERRORS = new Set(["StartupError", "ApiError", "ChainSourceError", "ComputeAgentError"]);

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const load = command === undefined ? undefined : Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load) return (await load())(args);
  switch (command) {
    // The client's version alone, at once: no request, nothing else loaded.
    case "--version": {
      const { SHOAL_VERSION } = await import("../version.ts");
      console.log(`shoal v${SHOAL_VERSION}`);
      return 0;
    }
    case undefined:
    case "help":
    case "-h":
    case "--help":
      console.log(HELP);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    // Messages may carry text from the API, a node or the command line: never raw to the terminal.
    const message = printable((e as Error)?.message ?? String(e), { multiline: true });
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith?.("ERR_PARSE_ARGS")) {
      console.error(`Error: ${message}\nRun '${e instanceof UsageError ? e.help : "shoal --help"}' for usage.`);
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
