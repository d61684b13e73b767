import { existsSync, statfsSync } from "node:fs";
import { arch, cpus, hostname, platform, totalmem } from "node:os";
import type { NodeInfo, ResourceReport, Resources } from "../events/catalog/node-info.ts";
import { buildVersion } from "../version.ts";

function diskBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return Number(s.blocks) * Number(s.bsize);
  } catch {
    return 0;
  }
}

/** Engines this machine can actually run; Docker counts when its socket is there. */
function detectEngines(): string[] {
  return existsSync("/var/run/docker.sock") ? ["docker"] : [];
}

export function machineCapacity(dataDir: string): Resources {
  return { CPU: cpus().length, Memory: totalmem(), Disk: diskBytes(dataDir), GPU: 0 };
}

/** What a compute node reports about itself: Bacalhau's built-in labels plus the configured ones. */
export function computeNodeInfo(nodeId: string, labels: Readonly<Record<string, string>>, dataDir: string): NodeInfo {
  const capacity = machineCapacity(dataDir);
  return {
    NodeID: nodeId,
    NodeType: "Compute",
    Hostname: hostname(),
    Labels: { "Operating-System": platform(), Architecture: arch(), ...labels },
    ComputeNodeInfo: {
      ExecutionEngines: detectEngines(),
      Publishers: [],
      StorageSources: [],
      MaxCapacity: capacity,
      MaxJobRequirements: capacity,
    },
    BacalhauVersion: { GitVersion: buildVersion().GitVersion, GOOS: platform(), GOARCH: arch() },
  };
}

/** Nothing runs on a node yet (executions arrive with the job lifecycle), so all capacity is free. */
export function resourceReport(info: NodeInfo): ResourceReport {
  return {
    AvailableCapacity: info.ComputeNodeInfo?.MaxCapacity ?? {},
    QueueUsedCapacity: {},
    RunningExecutions: 0,
    EnqueuedExecutions: 0,
  };
}
