import type { Clock } from "../../src/actors/clock.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import type { RetentionRule } from "../../src/compute/publisher/results-to-remove.ts";
import type { NetworkType } from "../../src/compute/executor/executor.ts";
import type { ExecutionInputs } from "../../src/compute/inputs/execution-inputs.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { silentLogger, tempDir } from "./fixtures.ts";
import { removeContainersOf } from "./node-containers.ts";
import { ownNatsOrchestratorConfig } from "./own-nats-orchestrator-config.ts";
import { ownedDockerExecutor } from "./owned-docker-executor.ts";
import { startJoined } from "./start-joined.ts";
import { testAgent } from "./test-agent.ts";

const MIB = 1024 * 1024;

/** A compute node of a test cluster: its id, configured labels and what its Docker executor offers. */
export interface DockerNode {
  readonly id: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly cpuMillis?: number;
  readonly memoryBytes?: number;
  /** Networks its executions may ask for besides None. */
  readonly allowedNetworks?: readonly NetworkType[];
  /** The input sources it reads (its allow-list, where its downloads go); none unless given. */
  readonly inputs?: ExecutionInputs;
  /** Compute.Publishers.MaxResultBytes (default: the key's). */
  readonly maxResultBytes?: number;
  /** Compute.Publishers.Local.* (default: the keys'). */
  readonly resultRetention?: RetentionRule;
  /** The node's clock (default: the system's). */
  readonly clock?: Clock;
  /** Keeps what it knows of its executions in memory only: such a node publishes no results (no Publishers). */
  readonly executionsInMemory?: boolean;
}

export interface DockerNodeOrchestrator {
  readonly orchestrator: RunningOrchestrator;
  /** The first node's agent. */
  readonly agent: ComputeAgent;
  /** Every node's agent, in the order of their ids. */
  readonly agents: readonly ComputeAgent[];
  /** The orchestrator's DataDir, where its events are stored. */
  readonly dataDir: string;
  /** Stops the agents and the orchestrator, and removes the nodes' containers. */
  stop(): Promise<void>;
}

/**
 * An orchestrator on its own NATS with `users` (and any other `config`), and a compute agent per node joined to it
 * that runs its executions in Docker (1 CPU, 256 MiB each unless the node says otherwise): the smallest real
 * cluster a job runs on.
 */
export async function startDockerNodeOrchestrator(
  prefix: string,
  users: readonly AuthUser[],
  nodes: string | readonly (string | DockerNode)[],
  config: Partial<ShoalConfig> = {},
): Promise<DockerNodeOrchestrator> {
  const list = (typeof nodes === "string" ? [nodes] : nodes).map((n) => (typeof n === "string" ? { id: n } : n));
  const orchestratorConfig = await ownNatsOrchestratorConfig(prefix, { "API.Auth.Users": [...users], ...config });
  const orchestrator = await startOrchestrator(orchestratorConfig, silentLogger);
  const agents = list.map((node) => {
    const dataDir = tempDir(`shoal-${node.id}-`);
    return testAgent({
      nodeId: node.id,
      dataDir,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      labels: { ...node.labels },
      ...(node.maxResultBytes === undefined ? {} : { maxResultBytes: node.maxResultBytes }),
      ...(node.resultRetention === undefined ? {} : { resultRetention: node.resultRetention }),
      ...(node.clock === undefined ? {} : { clock: node.clock }),
      ...(node.executionsInMemory === undefined ? {} : { executionsInMemory: node.executionsInMemory }),
      executor: ownedDockerExecutor(node.id, dataDir, {
        capacity: { cpuMillis: node.cpuMillis ?? 1000, memoryBytes: node.memoryBytes ?? 256 * MIB },
        allowedNetworks: node.allowedNetworks ?? [],
        ...(node.inputs === undefined ? {} : { inputs: node.inputs }),
      }),
    });
  });
  for (const [i, agent] of agents.entries()) await startJoined(agent, orchestrator.manager, list[i]!.id);
  return {
    orchestrator,
    agent: agents[0] as ComputeAgent,
    agents,
    dataDir: orchestratorConfig.DataDir,
    async stop() {
      for (const agent of agents) await agent.stop();
      await orchestrator.stop();
      await removeContainersOf(...list.map((n) => n.id));
    },
  };
}
