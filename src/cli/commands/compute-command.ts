import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseLabels } from "../../config/coerce.ts";
import type { ShoalConfig } from "../../config/keys.ts";
import { allocatedCapacity } from "../../compute/allocated-capacity.ts";
import { ComputeAgent } from "../../compute/compute-agent.ts";
import { loadOrCreateContainerOwner } from "../../compute/container-owner.ts";
import { DockerExecutor } from "../../compute/executor/docker-executor.ts";
import { ExecutionInputs } from "../../compute/inputs/execution-inputs.ts";
import type { NetworkType } from "../../compute/executor/executor.ts";
import { ConfigError } from "../../config/config-error.ts";
import { metricsListenOf } from "../../compute/metrics-listen-of.ts";
import { loadOrCreateNodeKey } from "../../compute/node-key.ts";
import { lockDataDir } from "../../fs/data-dir-lock.ts";
import { createLogger } from "../../logging/create-logger.ts";
import { resolveNodeIdentity } from "../../orchestrator/node-identity.ts";
import { redactUrl } from "../../security/redact-url.ts";
import { nodePermissions } from "../../transport/nats-auth/nats-roles.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { confinementFromConfig } from "../confinement-from-config.ts";
import { resultRetentionFromConfig } from "../result-retention-from-config.ts";
import { nodeIdFlag } from "../node-id-flag.ts";
import { computeNatsTls, localOrchestratorDirs } from "../../compute/compute-nats-tls.ts";
import { waitForSignal } from "./serve-command.ts";
import { commandHelp } from "../help/command-help.ts";

/** `localDataDirs`: the DataDirs of orchestrators on this machine, whose generated CA the node trusts for NATS. */
export function computeAgentFromConfig(
  config: ShoalConfig,
  nodeId: string,
  logger: ReturnType<typeof createLogger>,
  localDataDirs: readonly string[],
): ComputeAgent {
  const executor = dockerExecutorFromConfig(config, nodeId, logger);
  const resultRetention = resultRetentionFromConfig(config);
  return new ComputeAgent({
    tls: computeNatsTls(config, localDataDirs, logger),
    nodeId,
    orchestrators: config["Compute.Orchestrators"],
    token: config["Compute.Auth.Token"],
    labels: config.Labels,
    dataDir: config.DataDir,
    heartbeatMs: config["Compute.Heartbeat.Interval"],
    infoUpdateMs: config["Compute.Heartbeat.InfoUpdateInterval"],
    resourceUpdateMs: config["Compute.Heartbeat.ResourceUpdateInterval"],
    logger,
    ...(executor === undefined ? {} : { executor }),
    ...metricsListenOf(config),
    maxResultBytes: config["Compute.Publishers.MaxResultBytes"],
    resultRetention,
  });
}

/**
 * The node runs executions in Docker when an engine is there to talk to (DOCKER_HOST, or the
 * default socket); without one it takes no work, as Bacalhau's node without an engine.
 */
function dockerExecutorFromConfig(
  config: ShoalConfig,
  nodeId: string,
  logger: ReturnType<typeof createLogger>,
): DockerExecutor | undefined {
  // Checked with or without an engine: a bad key is refused, not ignored on a machine without Docker.
  const networks = config["Compute.Docker.AllowedNetworks"];
  const unknown = networks.filter((n) => n !== "None" && n !== "Host" && n !== "Full");
  if (unknown.length > 0)
    throw new ConfigError(
      `Compute.Docker.AllowedNetworks: unknown network(s) ${unknown.join(", ")} (allowed: Host, Full)`,
    );
  const confinement = confinementFromConfig(config);
  const capacity = allocatedCapacity(
    config["Compute.AllocatedCapacity.CPU"],
    config["Compute.AllocatedCapacity.Memory"],
  );
  if (!process.env.DOCKER_HOST && !existsSync("/var/run/docker.sock")) return undefined;
  return new DockerExecutor({
    nodeId,
    owner: loadOrCreateContainerOwner(config.DataDir, nodeId),
    capacity,
    logger,
    allowedNetworks: networks as NetworkType[],
    allowPull: config["Compute.Docker.AllowPull"],
    maxOutputBytes: config["Compute.Docker.MaxOutputBytes"],
    stopGraceSeconds: Math.ceil(config["Compute.Docker.StopGracePeriod"] / 1000),
    confinement,
    inputs: new ExecutionInputs({
      allowListedLocalPaths: config["Compute.AllowListedLocalPaths"],
      downloadDir: join(config.DataDir, "inputs"),
      limits: { maxBytes: config["InputSources.MaxDownloadSize"], timeoutMs: config["InputSources.ReadTimeout"] },
    }),
  });
}

/**
 * The node's public key, and the entry an external NATS's operator adds so that it may join and speak only for itself.
 */
function nodeKeyInstructions(nodeId: string, dataDir: string): string {
  const key = loadOrCreateNodeKey(dataDir, nodeId);
  const entry = { nkey: key.publicKey, permissions: nodePermissions(nodeId) };
  return [
    `Node ${nodeId}'s public key (its seed stays in ${key.path}):`,
    `  ${key.publicKey}`,
    "",
    "The orchestrator's own NATS lets it in when it joins. For an external NATS, add this user (docs/security.md):",
    `  ${JSON.stringify(entry)}`,
  ].join("\n");
}

/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  ...CONFIG_OPTIONS,
  "node-id": { type: "string" },
  labels: { type: "string" },
  "show-key": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function computeCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal compute"));
    return 0;
  }
  const givenId = nodeIdFlag(values["node-id"], "shoal compute --help");
  const base = configFrom(values);
  const labels = values.labels === undefined ? {} : parseLabels(values.labels, "--labels", "Labels");
  // Each source is within the cap on its own; together they must be too.
  const config = {
    ...base,
    Labels: parseLabels({ ...base.Labels, ...labels }, "--labels with the Labels config", "Labels"),
  };
  const dataDir = join(config.DataDir, "compute");
  // Reading (or creating) the key is safe beside a running agent: no lock, nothing else touched.
  if (values["show-key"]) {
    console.log(nodeKeyInstructions(givenId ?? resolveNodeIdentity(config.NodeID, dataDir), dataDir));
    return 0;
  }
  const logger = createLogger({ level: config["Logging.Level"], mode: config["Logging.Mode"] });
  // Two agents on one DataDir would share a node id and a registration sentinel.
  const lock = lockDataDir(dataDir, "shoal compute");
  // Released however this ends: a bad identity, a refused join or a signal.
  try {
    const nodeId = givenId ?? resolveNodeIdentity(config.NodeID, dataDir);
    const agent = computeAgentFromConfig(
      { ...config, DataDir: dataDir },
      nodeId,
      logger.child({ nodeId }),
      localOrchestratorDirs(config),
    );
    let interrupted = false;
    const signal = waitForSignal().then(() => {
      interrupted = true;
    });
    try {
      await Promise.race([agent.start(), signal]);
      if (!interrupted) {
        console.log(
          `Compute node ${nodeId} is running (orchestrators: ${config["Compute.Orchestrators"].map(redactUrl).join(", ")}).`,
        );
        await signal;
      }
    } finally {
      await agent.stop();
    }
    return 0;
  } finally {
    lock.release();
  }
}
