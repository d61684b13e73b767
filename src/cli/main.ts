import { ConfigError } from "../config/config-error.ts";
import { StartupError } from "../orchestrator/services.ts";
import { SHOAL_VERSION } from "../version.ts";
import { ApiError } from "./api-client.ts";
import { computeCommand } from "./commands/compute-command.ts";
import { devstackCommand } from "./commands/devstack-command.ts";
import { nodeCommand } from "./commands/node-command.ts";
import { serveCommand } from "./commands/serve-command.ts";
import { UsageError } from "./usage-error.ts";

const HELP = `shoal — event-sourced node management for compute clusters

Usage: shoal <command> [options]

Commands:
  serve       run the orchestrator (API, node manager, NATS, event store)
  compute     run a compute node agent
  devstack    run an orchestrator and N compute nodes in one process
  node        list, describe, approve, reject, delete nodes; show their history
  version     print the version

Run 'shoal <command> --help' for a command's options.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "serve":
      return serveCommand(args);
    case "compute":
      return computeCommand(args);
    case "devstack":
      return devstackCommand(args);
    case "node":
      return nodeCommand(args);
    case "version":
    case "--version":
      console.log(`shoal v${SHOAL_VERSION}`);
      return 0;
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
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith?.("ERR_PARSE_ARGS")) {
      console.error(`Error: ${(e as Error).message}\nRun 'shoal --help' for usage.`);
      process.exit(2);
    }
    if (e instanceof ConfigError) console.error(`Config error: ${e.message}`);
    else if (e instanceof StartupError || e instanceof ApiError) console.error(`Error: ${e.message}`);
    else console.error(e);
    process.exit(1);
  },
);
