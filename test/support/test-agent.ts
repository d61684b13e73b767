import { ComputeAgent, type ComputeAgentOptions } from "../../src/compute/compute-agent.ts";
import { silentLogger, tempDir } from "./fixtures.ts";

/** A real compute agent on test timings: fast heartbeats and short join backoff; any option can be given. */
export function testAgent(options: Pick<ComputeAgentOptions, "nodeId" | "orchestrators" | "token"> & Partial<ComputeAgentOptions>): ComputeAgent {
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
