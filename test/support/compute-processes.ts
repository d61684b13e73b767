import type { Body } from "./job-api-client.ts";
import { ShoalProcess, waitFor } from "./shoal-process.ts";

export interface ComputeProcessOptions {
  readonly nodeId: string;
  readonly dataDir: string;
  /** Compute.Orchestrators: the orchestrator's NATS URL. */
  readonly orchestrators: string;
  /** Compute.Auth.Token; left out where the caller gives it another way (SHOAL_COMPUTE_AUTH_TOKEN). */
  readonly token?: string;
  /** Compute.AllocatedCapacity: 1 CPU and 256 MiB unless said. */
  readonly cpu?: string;
  readonly memory?: string;
  /** More `-c KEY=VALUE` settings, after the others. */
  readonly settings?: readonly string[];
  readonly env?: Record<string, string>;
}

/** A `shoal compute` process as a user starts it, with fast heartbeats (500 ms) so that tests see its state soon. */
export function startComputeProcess(options: ComputeProcessOptions): ShoalProcess {
  return ShoalProcess.start(
    [
      "compute",
      "--node-id",
      options.nodeId,
      "-c",
      `DataDir=${options.dataDir}`,
      "-c",
      `Compute.Orchestrators=${options.orchestrators}`,
      ...(options.token === undefined ? [] : ["-c", `Compute.Auth.Token=${options.token}`]),
      "-c",
      "Compute.Heartbeat.Interval=500ms",
      "-c",
      "Compute.Heartbeat.ResourceUpdateInterval=500ms",
      "-c",
      `Compute.AllocatedCapacity.CPU=${options.cpu ?? "1"}`,
      "-c",
      `Compute.AllocatedCapacity.Memory=${options.memory ?? "256Mi"}`,
      ...(options.settings ?? []).flatMap((setting) => ["-c", setting]),
    ],
    options.env,
  );
}

/** Where a wait reads a node (GET /nodes/{id}). */
export interface NodeReader {
  node(nodeId: string): Promise<Body>;
}

/** Until the orchestrator lists the node APPROVED (GET /nodes/{id}); a failure shows the process's last stderr. */
export async function untilApproved(
  api: NodeReader,
  nodeId: string,
  process?: ShoalProcess,
  timeoutMs = 30_000,
): Promise<void> {
  await waitFor(
    async () => (await api.node(nodeId))?.Node?.Membership === "APPROVED",
    timeoutMs,
    () => `node ${nodeId} approved${process ? `; its stderr: ${process.stderr.slice(-2000)}` : ""}`,
  );
}
