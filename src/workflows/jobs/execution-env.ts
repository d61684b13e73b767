import type { JobSpec } from "../../../machines/job/job-spec.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";

/**
 * The environment Bacalhau v1.7 gives every execution besides the task's own, which it overrides
 * [pkg/compute/envvars.go]: the execution's and job's ids, the job type, and the partition with
 * the job's Count (0 for ops and daemon, as Bacalhau stores it). A job may not set `BACALHAU_…`
 * names itself (spec validation), so these are the only ones.
 */
export function bacalhauEnv(spec: JobSpec, execution: ExecutionState): Record<string, string> {
  return {
    BACALHAU_EXECUTION_ID: execution.executionId,
    BACALHAU_JOB_ID: execution.jobId,
    BACALHAU_JOB_TYPE: spec.Type,
    BACALHAU_PARTITION_INDEX: String(execution.partitionIndex),
    BACALHAU_PARTITION_COUNT: String(spec.Count),
  };
}
