import type { ExecutionState } from "../execution/execution-state.ts";
import { isUnderWay } from "./execution-under-way.ts";

/**
 * Whether `other` is the replacement of `drained`, a service execution on a draining node: the same job's partition
 * under way on another node, of the same version or a later one. An earlier version's execution replaces nothing: an
 * update stops it (the job's rolling replacement), so the current version's partition would be left with none.
 */
export function isReplacementOf(other: ExecutionState, drained: ExecutionState): boolean {
  return (
    other.executionId !== drained.executionId &&
    other.jobId === drained.jobId &&
    other.partitionIndex === drained.partitionIndex &&
    other.nodeId !== drained.nodeId &&
    other.jobVersion >= drained.jobVersion &&
    isUnderWay(other)
  );
}
