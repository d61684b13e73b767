import { cpus, totalmem } from "node:os";
import { parseBytes, parseCpu } from "../../machines/job/task-resources.ts";
import { ConfigError } from "../config/config-error.ts";
import type { ExecutionResources } from "./executor/executor.ts";

/** This machine, as the percentages of Compute.AllocatedCapacity read it. */
export interface MachineResources {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
}

export const thisMachine = (): MachineResources => ({ cpuMillis: cpus().length * 1000, memoryBytes: totalmem() });

const PERCENT = /^(\d+(?:\.\d+)?)%$/;

function amount(
  key: string,
  value: string,
  whole: number,
  parse: (s: string) => number | undefined,
  example: string,
): number {
  const text = value.trim();
  const percent = PERCENT.exec(text);
  const result = percent ? Math.floor((whole * Number(percent[1])) / 100) : parse(text);
  if (
    result === undefined ||
    !Number.isSafeInteger(result) ||
    result <= 0 ||
    (percent !== null && Number(percent[1]) > 100)
  ) {
    throw new ConfigError(
      `${key}: invalid value ${JSON.stringify(value)} (a share of this machine such as 70%, or ${example})`,
    );
  }
  return result;
}

/**
 * What a compute node offers executions (Bacalhau's Compute.AllocatedCapacity): CPU as cores,
 * millicores or a share of the machine's cores; memory as bytes (go-humanize: `4Gb`, `2Gi`) or a
 * share of its memory.
 */
export function allocatedCapacity(
  cpu: string,
  memory: string,
  machine: MachineResources = thisMachine(),
): ExecutionResources {
  return {
    cpuMillis: amount(
      "Compute.AllocatedCapacity.CPU",
      cpu,
      machine.cpuMillis,
      (s) => {
        const cores = parseCpu(s);
        return cores === undefined ? undefined : Math.round(cores * 1000);
      },
      "cores or millicores such as 2 or 1500m",
    ),
    memoryBytes: amount(
      "Compute.AllocatedCapacity.Memory",
      memory,
      machine.memoryBytes,
      parseBytes,
      "a size such as 4Gb or 2Gi",
    ),
  };
}
