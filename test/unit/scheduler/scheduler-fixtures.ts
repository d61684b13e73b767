import type { CandidateNode, ExistingExecution, PlacementRequest } from "../../../src/scheduler/placement-request.ts";
import { fromBacalhauResources, type Resources } from "../../../src/scheduler/resources.ts";

export const GB = 1_000_000_000;
export const MB = 1_000_000;

/**
 * A node as Bacalhau's compute node reports itself: 2 cores, 4 GB memory, 100 GB disk, no GPU; approved and healthy.
 */
export function node(id: string, over: Partial<CandidateNode> = {}): CandidateNode {
  return {
    id,
    type: "Compute",
    membership: "APPROVED",
    health: "HEALTHY",
    labels: { "Operating-System": "linux", Architecture: "amd64" },
    engines: ["docker"],
    capacity: fromBacalhauResources({ CPU: 2, Memory: 4 * GB, Disk: 100 * GB, GPU: 0 }),
    ...over,
  };
}

export const res = (cpuMillis: number, memoryBytes = 0, diskBytes = 0, gpus = 0): Resources => ({
  cpuMillis,
  memoryBytes,
  diskBytes,
  gpus,
});

/** A batch job asking for one replica of 500m CPU and 1 GB memory, no queueing. */
export function job(over: Partial<PlacementRequest> = {}): PlacementRequest {
  return {
    jobId: "j-1",
    type: "batch",
    count: 1,
    constraints: [],
    engine: "docker",
    resources: res(500, GB),
    executions: [],
    nodes: [],
    queue: { timeoutMs: 0, createdAtMs: 1_000, nowMs: 1_000 },
    ...over,
  };
}

export function exec(
  id: string,
  nodeId: string,
  state: ExistingExecution["state"],
  over: Partial<ExistingExecution> = {},
): ExistingExecution {
  const terminal = ["Completed", "Failed", "Cancelled", "AskForBidRejected", "BidRejected"].includes(state);
  return { id, nodeId, state, desiredState: terminal ? "Stopped" : "Running", ...over };
}
