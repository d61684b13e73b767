import { existsSync, statfsSync } from "node:fs";
import { cpus, hostname, totalmem } from "node:os";
import type { NodeInfo, ResourceReport, Resources } from "../events/catalog/node-info.ts";
import { builtInLabels } from "../labels/built-in-labels.ts";
import { machinePlatform } from "../labels/go-platform.ts";
import { buildVersion } from "../version.ts";
import type { CapacityLedger } from "./executor/capacity-ledger.ts";

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

/** Bacalhau's resources (CPU in cores) of what a ledger counts in millicores and bytes. */
const asResources = (cpuMillis: number, memoryBytes: number, disk: number): Resources => ({
  CPU: cpuMillis / 1000,
  Memory: memoryBytes,
  Disk: disk,
  GPU: 0,
});

/**
 * What a compute node reports about itself: Bacalhau's built-in labels plus the configured ones.
 * With an executor, its capacity is what the executor offers (Compute.AllocatedCapacity), and the
 * node runs docker; it reads the inputs its executor reads (StorageSources).
 */
export function computeNodeInfo(
  nodeId: string,
  labels: Readonly<Record<string, string>>,
  dataDir: string,
  ledger?: CapacityLedger,
  publishers: readonly string[] = [],
  storageSources: readonly string[] = [],
): NodeInfo {
  const machine = machineCapacity(dataDir);
  const capacity = ledger
    ? asResources(ledger.capacity.cpuMillis, ledger.capacity.memoryBytes, machine.Disk ?? 0)
    : machine;
  const platform = machinePlatform();
  return {
    NodeID: nodeId,
    NodeType: "Compute",
    Hostname: hostname(),
    Labels: { ...builtInLabels(nodeId, platform), ...labels },
    ComputeNodeInfo: {
      ExecutionEngines: ledger ? ["docker"] : detectEngines(),
      Publishers: [...publishers],
      StorageSources: [...storageSources],
      MaxCapacity: capacity,
      MaxJobRequirements: capacity,
    },
    BacalhauVersion: { GitVersion: buildVersion().GitVersion, ...platform },
  };
}

/**
 * What is free: the executor's capacity minus what its running executions hold (its ledger).
 * Without an executor nothing runs, so all capacity is free.
 */
export function resourceReport(info: NodeInfo, ledger?: CapacityLedger): ResourceReport {
  if (ledger) {
    const free = ledger.free();
    const disk = info.ComputeNodeInfo?.MaxCapacity.Disk ?? 0;
    return {
      AvailableCapacity: asResources(Math.max(0, free.cpuMillis), Math.max(0, free.memoryBytes), disk),
      QueueUsedCapacity: {},
      RunningExecutions: ledger.running().length,
      EnqueuedExecutions: 0,
    };
  }
  return {
    AvailableCapacity: info.ComputeNodeInfo?.MaxCapacity ?? {},
    QueueUsedCapacity: {},
    RunningExecutions: 0,
    EnqueuedExecutions: 0,
  };
}
