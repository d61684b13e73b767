import { badRequest, type ShoalError } from "../../errors/shoal-error.ts";
import type { ExecutionResources } from "./executor.ts";

/**
 * Labels on every container an executor creates, so that a restarted node finds its containers
 * (and only its own: several nodes may share one engine) and knows what each holds.
 */
export const EXECUTION_LABEL = "shoal.execution";
export const NODE_LABEL = "shoal.node";
/** The node's DataDir (src/compute/container-owner.ts): nodes with the same id on one engine are told apart by it. */
export const OWNER_LABEL = "shoal.owner";
export const CPU_LABEL = "shoal.cpu-millis";
export const MEMORY_LABEL = "shoal.memory-bytes";
export const TIMEOUT_LABEL = "shoal.timeout-ms";

/** Docker's container-name alphabet, which the execution id becomes part of. */
const EXECUTION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function executionIdProblem(executionId: string): ShoalError | undefined {
  return EXECUTION_ID.test(executionId)
    ? undefined
    : badRequest(
        `execution id ${JSON.stringify(executionId)} is not usable: 1-128 letters, digits, '_', '.', '-', starting with a letter or digit`,
      );
}

/** One container per execution per engine: a second create of the same execution is refused by name. */
export function containerName(executionId: string): string {
  return `shoal-${executionId}`;
}

export function executionLabels(
  nodeId: string,
  owner: string | undefined,
  executionId: string,
  resources: ExecutionResources,
  timeoutMs: number,
): Record<string, string> {
  return {
    [EXECUTION_LABEL]: executionId,
    [NODE_LABEL]: nodeId,
    ...(owner === undefined ? {} : { [OWNER_LABEL]: owner }),
    [CPU_LABEL]: String(resources.cpuMillis),
    [MEMORY_LABEL]: String(resources.memoryBytes),
    [TIMEOUT_LABEL]: String(timeoutMs),
  };
}

const wholeNumber = (value: string | undefined): number => {
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
};

/** What a found container says it holds; a label that is missing or garbled counts as 0. */
export function labelledResources(labels: Readonly<Record<string, string>>): ExecutionResources {
  return { cpuMillis: wholeNumber(labels[CPU_LABEL]), memoryBytes: wholeNumber(labels[MEMORY_LABEL]) };
}

export function labelledTimeoutMs(labels: Readonly<Record<string, string>>): number {
  return wholeNumber(labels[TIMEOUT_LABEL]);
}
