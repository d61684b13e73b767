import Docker from "dockerode";
import type { ComputeAgent, ComputeAgentOptions } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
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

/**
 * An orchestrator on its own NATS with `users`, and one compute agent `nodeId` joined to it that runs its
 * executions in Docker (1 CPU, 256 MiB): the smallest real cluster a job runs on.
 */
export async function startDockerNodeOrchestrator(
  prefix: string,
  users: readonly AuthUser[],
  nodeId: string,
  agentOptions: Partial<ComputeAgentOptions> = {},
): Promise<DockerNodeOrchestrator> {
  const orchestrator = await startOrchestrator(
    await ownNatsOrchestratorConfig(prefix, { "API.Auth.Users": [...users] }),
    silentLogger,
  );
  const agent = testAgent({
    nodeId,
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    executor: new DockerExecutor({
      nodeId,
      capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB },
      logger: silentLogger,
      docker: new Docker(),
      stopGraceSeconds: 0,
    }),
    ...agentOptions,
  });
  await startJoined(agent, orchestrator.manager, nodeId);
  return {
    orchestrator,
    agent,
    async stop() {
      await agent.stop();
      await orchestrator.stop();
      await removeContainersOf(nodeId);
    },
  };
}
