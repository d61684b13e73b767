import { parseArgs } from "node:util";
import type { Logger } from "pino";
import { createLogger } from "../../logging/create-logger.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../orchestrator/orchestrator.ts";
import { redactUrl } from "../../security/redact-url.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { commandHelp } from "../help/command-help.ts";
import { nodeIdFlag } from "../node-id-flag.ts";

/** Resolves when the process should exit (after SIGINT/SIGTERM and a clean stop). */
/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  ...CONFIG_OPTIONS,
  "node-id": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal serve"));
    return 0;
  }
  const nodeId = nodeIdFlag(values["node-id"], "shoal serve --help");
  const config = configFrom(values, nodeId === undefined ? {} : { NodeID: nodeId });
  const logger = createLogger({ level: config["Logging.Level"], mode: config["Logging.Mode"] });
  // Listening before anything starts: a SIGTERM during start-up, or one sent the moment
  // "is running" is read, stops cleanly once started instead of killing the process with its
  // detached nats-server left behind.
  const signalled = waitForSignal();
  const orchestrator = await startOrchestrator(config, logger);
  reloadTlsOnHangUp(orchestrator, logger);
  // One write: whoever reads "is running" from a pipe has the whole banner in the same read.
  const banner = [
    `Shoal orchestrator ${orchestrator.nodeId} is running.`,
    `  API:  ${orchestrator.apiUrl}`,
    `  NATS: ${redactUrl(orchestrator.natsUrl)}`,
    ...(orchestrator.apiCaFile ? [apiCaLine(orchestrator.apiCaFile, "  ")] : []),
    ...(orchestrator.adminKey ? [adminKeyLine(orchestrator.adminKey, "  ")] : []),
    joinInstructions(orchestrator),
  ];
  console.log(banner.join("\n"));
  await signalled;
  logger.info("shutting down");
  const stopping = performance.now();
  await orchestrator.stop();
  // The last line before exit: a restart that seems slow shows how much of it the stop took.
  logger.info({ ms: Math.round(performance.now() - stopping) }, "stopped");
  return 0;
}

/** How a compute node joins and a downstream system reads events; paths, never the secrets themselves. */
export function joinInstructions(orchestrator: RunningOrchestrator): string {
  const token =
    orchestrator.joinToken.file === undefined ? "<Orchestrator.Auth.Token>" : `"$(cat ${orchestrator.joinToken.file})"`;
  // In the environment, not on the command line, where any user could read it in `ps`.
  const lines = [
    "",
    "Compute nodes join with the join token (only once; they then log in with their own key):",
    `  SHOAL_COMPUTE_AUTH_TOKEN=${token} shoal compute -c Compute.Orchestrators=${redactUrl(orchestrator.natsUrl)}`,
  ];
  if (orchestrator.natsCaFile)
    lines.push(
      `  (NATS speaks TLS: nodes run with this DataDir trust ${orchestrator.natsCaFile}; give others a copy of it`,
      "   with -c Compute.TLS.CACert=<file>)",
    );
  if (orchestrator.eventsReader) {
    lines.push(
      "Downstream systems read cluster events (SHOAL_EVENTS) as:",
      `  the NATS credentials file ${orchestrator.eventsReader.credsFile} ` +
        `(nats ${natsCliFlags(orchestrator, "<file>")})`,
    );
  }
  return lines.join("\n");
}

/** The nats CLI's flags for reading events: the credentials file, and the CA to trust when NATS speaks TLS. */
export function natsCliFlags(orchestrator: RunningOrchestrator, credsFile: string): string {
  return `--creds ${credsFile}${orchestrator.natsCaFile ? ` --tlsca ${orchestrator.natsCaFile}` : ""}`;
}

/** Where the generated CA is, which clients elsewhere trust (curl --cacert, shoal --api-tls-ca-cert). */
export function apiCaLine(file: string, indent: string): string {
  return `${indent}API CA:  ${file} (the API's HTTPS certificate is signed by it; \`shoal …\` on this machine trusts it)`;
}

/**
 * SIGHUP serves the API's certificate as its files are now: replaced API.TLS.CertFile/KeyFile, or the generated one
 * renewed. A file that cannot be used is logged and the certificate in use stays. The embedded nats-server reads its
 * certificate files again too (nats-server keeps its old configuration when the new one does not load).
 */
export function reloadTlsOnHangUp(orchestrator: RunningOrchestrator, logger: Logger): void {
  process.on("SIGHUP", () => {
    try {
      if (orchestrator.reloadApiTls()) logger.info("SIGHUP: the API serves its certificate files as they are now");
      else logger.info("SIGHUP: the API serves plain HTTP (API.TLS.Disable); nothing to reload");
    } catch (e) {
      logger.error({ err: (e as Error).message }, "SIGHUP: the API's certificate was not reloaded; the old one stays");
    }
    try {
      if (orchestrator.reloadNatsTls())
        logger.info("SIGHUP: the embedded nats-server serves its certificate files as they are now");
    } catch (e) {
      logger.error({ err: (e as Error).message }, "SIGHUP: the NATS certificate was not renewed; the old one stays");
    }
  });
}

/** Where the generated admin API key is: printed, never the key itself. */
export function adminKeyLine(key: { path: string; created: boolean }, indent: string): string {
  return `${indent}Admin API key ${key.created ? "created in" : "in"} ${key.path} (API.Auth.Users is empty; \`shoal node …\` on this machine uses it)`;
}

/**
 * Resolves on the first SIGINT or SIGTERM. The listeners stay for the life of the process: with
 * none, a signal takes Node's default action (death, no cleanup), so a second signal during the
 * (bounded) stop, or one before the command got here, would leave the nats-server child running.
 * Call it before starting anything a signal must stop.
 */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => resolve(signal);
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}
