import { ComputeAgent, type ComputeAgentOptions } from "../../src/compute/compute-agent.ts";
import { silentLogger, tempDir } from "./fixtures.ts";

/** A real compute agent on test timings: fast heartbeats and short join backoff; any option can be given. */
export function testAgent(
  options: Pick<ComputeAgentOptions, "nodeId" | "orchestrators" | "token"> & Partial<ComputeAgentOptions>,
): ComputeAgent {
  return new ComputeAgent({
    labels: {},
    dataDir: tempDir(`shoal-${options.nodeId}-`),
    heartbeatMs: 200,
    infoUpdateMs: 1000,
    resourceUpdateMs: 500,
    logger: silentLogger,
    initialBackoffMs: 100,
    maxBackoffMs: 400,
    ...options,
  });
}

/**
 * A started test agent for each node id, each in a DataDir of its own, joined to the orchestrator; info and resource
 * updates only every 5 s.
 */
export async function startJoinedAgents(
  orchestrator: { readonly natsUrl: string; readonly joinToken: { readonly token: string } },
  ids: readonly string[],
): Promise<Record<string, { agent: ComputeAgent; dataDir: string }>> {
  const agents: Record<string, { agent: ComputeAgent; dataDir: string }> = {};
  for (const id of ids) {
    const dataDir = tempDir(`shoal-${id}-`);
    const agent = testAgent({
      nodeId: id,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      dataDir,
      infoUpdateMs: 5000,
      resourceUpdateMs: 5000,
    });
    agents[id] = { agent, dataDir };
    await agent.start();
  }
  return agents;
}
