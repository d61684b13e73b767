import Docker from "dockerode";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { silentLogger } from "./fixtures.ts";
import { removeContainersOf } from "./node-containers.ts";
import { ownNatsOrchestratorConfig } from "./own-nats-orchestrator-config.ts";
import { startJoined } from "./start-joined.ts";
import { testAgent } from "./test-agent.ts";

const MIB = 1024 * 1024;

export interface DockerNodeOrchestrator {
  readonly orchestrator: RunningOrchestrator;
  /** The first node's agent. */
  readonly agent: ComputeAgent;
  /** Every node's agent, in the order of their ids. */
  readonly agents: readonly ComputeAgent[];
  /** Stops the agents and the orchestrator, and removes the nodes' containers. */
  stop(): Promise<void>;
}

/**
 * An orchestrator on its own NATS with `users` (and any other `config`), and a compute agent per node id joined to it
 * that runs its executions in Docker (1 CPU, 256 MiB each): the smallest real cluster a job runs on.
 */
export async function startDockerNodeOrchestrator(
  prefix: string,
  users: readonly AuthUser[],
  nodeId: string | readonly string[],
  config: Partial<ShoalConfig> = {},
): Promise<DockerNodeOrchestrator> {
  const nodeIds = typeof nodeId === "string" ? [nodeId] : nodeId;
  const orchestrator = await startOrchestrator(
    await ownNatsOrchestratorConfig(prefix, { "API.Auth.Users": [...users], ...config }),
    silentLogger,
  );
  const agents = nodeIds.map((id) =>
    testAgent({
      nodeId: id,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      executor: new DockerExecutor({
        nodeId: id,
        capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB },
        logger: silentLogger,
        docker: new Docker(),
        stopGraceSeconds: 0,
      }),
    }),
  );
  for (const [i, agent] of agents.entries()) await startJoined(agent, orchestrator.manager, nodeIds[i] as string);
  return {
    orchestrator,
    agent: agents[0] as ComputeAgent,
    agents,
    async stop() {
      for (const agent of agents) await agent.stop();
      await orchestrator.stop();
      for (const id of nodeIds) await removeContainersOf(id);
    },
  };
}
