import { waitFor } from "./shoal-process.ts";

/** Starts a compute agent and waits until the orchestrator's node manager has it live (it joined). */
export async function startJoined(
  agent: { start(): Promise<void> },
  manager: { live(nodeId: string): unknown },
  nodeId: string,
): Promise<void> {
  await agent.start();
  await waitFor(
    () => manager.live(nodeId) !== undefined,
    10_000,
    () => `node ${nodeId} joined`,
  );
}
