import Docker from "dockerode";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { NetworkType } from "../../src/compute/executor/executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { silentLogger } from "./fixtures.ts";
import { removeContainersOf } from "./node-containers.ts";
import { ownNatsOrchestratorConfig } from "./own-nats-orchestrator-config.ts";
import { startJoined } from "./start-joined.ts";
import { testAgent } from "./test-agent.ts";

const MIB = 1024 * 1024;

export interface DockerNodeOrchestrator {
  readonly orchestrator: RunningOrchestrator;
  readonly agent: ComputeAgent;
  /** Stops the agent and the orchestrator, and removes the node's containers. */
  stop(): Promise<void>;
}

/** A compute node of a test cluster: its id, configured labels and the capacity its Docker executor declares. */
export interface DockerNode {
  readonly id: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly cpuMillis?: number;
  readonly memoryBytes?: number;
  /** Networks its executions may ask for besides None. */
  readonly allowedNetworks?: readonly NetworkType[];
}

export interface DockerNodesOrchestrator {
  readonly orchestrator: RunningOrchestrator;
  readonly agents: readonly ComputeAgent[];
  /** The orchestrator's DataDir, where its events are stored. */
  readonly dataDir: string;
  /** Stops the agents and the orchestrator, and removes the nodes' containers. */
  stop(): Promise<void>;
}

/**
 * An orchestrator on its own NATS with `users`, and a compute agent per node joined to it that runs its executions
 * in Docker (1 CPU, 256 MiB unless the node says otherwise).
 */
export async function startDockerNodesOrchestrator(
  prefix: string,
  users: readonly AuthUser[],
  nodes: readonly DockerNode[],
): Promise<DockerNodesOrchestrator> {
  const config = await ownNatsOrchestratorConfig(prefix, { "API.Auth.Users": [...users] });
  const orchestrator = await startOrchestrator(config, silentLogger);
  const agents = nodes.map((node) =>
    testAgent({
      nodeId: node.id,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      labels: { ...node.labels },
      executor: new DockerExecutor({
        nodeId: node.id,
        capacity: { cpuMillis: node.cpuMillis ?? 1000, memoryBytes: node.memoryBytes ?? 256 * MIB },
        logger: silentLogger,
        docker: new Docker(),
        stopGraceSeconds: 0,
        allowedNetworks: node.allowedNetworks ?? [],
      }),
    }),
  );
  for (const [i, agent] of agents.entries()) await startJoined(agent, orchestrator.manager, nodes[i]!.id);
  return {
    orchestrator,
    agents,
    dataDir: config.DataDir,
    async stop() {
      for (const agent of agents) await agent.stop();
      await orchestrator.stop();
      await removeContainersOf(...nodes.map((n) => n.id));
    },
  };
}

/** The smallest real cluster a job runs on: one node, `nodeId`. */
export async function startDockerNodeOrchestrator(
  prefix: string,
  users: readonly AuthUser[],
  nodeId: string,
): Promise<DockerNodeOrchestrator> {
  const cluster = await startDockerNodesOrchestrator(prefix, users, [{ id: nodeId }]);
  return { orchestrator: cluster.orchestrator, agent: cluster.agents[0]!, stop: () => cluster.stop() };
}
