import type { NodeInfo } from "../events/catalog/node-info.ts";
import { builtInLabels } from "../labels/built-in-labels.ts";
import { buildVersion } from "../version.ts";

const GiB = 1024 ** 3;
const SHAPES = [
  { CPU: 2, Memory: 4 * GiB, Disk: 50 * GiB, GPU: 0 },
  { CPU: 8, Memory: 32 * GiB, Disk: 200 * GiB, GPU: 0 },
  { CPU: 32, Memory: 128 * GiB, Disk: 1000 * GiB, GPU: 0 },
  { CPU: 16, Memory: 64 * GiB, Disk: 500 * GiB, GPU: 2 },
] as const;
const ZONES = ["zone-a", "zone-b", "zone-c"] as const;
/** Racks of the fleet: a constraint on one picks every 50th node, a few dozen of a few thousand. */
export const SIM_RACKS = 50;

/** Simulated nodes are all Linux on amd64. */
const SIM_PLATFORM = { GOOS: "linux", GOARCH: "amd64" } as const;

const shapeOf = (index: number) => SHAPES[index % SHAPES.length] as (typeof SHAPES)[number];

/** What the i-th simulated node can run at once, as its executor's ledger counts it. */
export function virtualNodeCapacity(index: number): { cpuMillis: number; memoryBytes: number } {
  const shape = shapeOf(index);
  return { cpuMillis: shape.CPU * 1000, memoryBytes: shape.Memory };
}

/**
 * What a simulated node reports: a few machine shapes, zones and racks (`rack-<i mod 50>`), so
 * that filters and orderings over the fleet have something to tell apart, and a `sim` label that
 * marks it as simulated.
 */
export function virtualNodeInfo(nodeId: string, index: number): NodeInfo {
  const capacity = shapeOf(index);
  return {
    NodeID: nodeId,
    NodeType: "Compute",
    Hostname: `${nodeId}.sim`,
    Labels: {
      ...builtInLabels(nodeId, SIM_PLATFORM),
      sim: "true",
      zone: ZONES[index % ZONES.length] as string,
      rack: `rack-${index % SIM_RACKS}`,
    },
    ComputeNodeInfo: {
      ExecutionEngines: ["docker"],
      Publishers: [],
      StorageSources: [],
      MaxCapacity: capacity,
      MaxJobRequirements: capacity,
    },
    BacalhauVersion: { GitVersion: buildVersion().GitVersion, ...SIM_PLATFORM },
  };
}
