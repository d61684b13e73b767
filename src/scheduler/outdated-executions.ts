import { isTerminalComputeState } from "../../machines/execution/execution-states.ts";
import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import type { JobState } from "../../machines/job/job-state.ts";
import type { ExecutionToCancel } from "./job-plan.ts";

/** Bacalhau's reason for an execution of an earlier version stopped (pkg/orchestrator/events.go). */
export const STOPPED_FOR_JOB_UPDATE = "Execution stopped for job update";

/**
 * The executions of a job's earlier versions still under way, to stop now that a later version
 * runs. Bacalhau stops those not yet running at once and the running ones at most 20 per
 * evaluation; Shoal stops all of them in one evaluation.
 */
export function outdatedExecutions(
  job: Pick<JobState, "version">,
  executions: readonly ExecutionState[],
): ExecutionToCancel[] {
  return executions
    .filter(
      (e) => e.jobVersion < job.version && e.computeState !== undefined && !isTerminalComputeState(e.computeState),
    )
    .map((e) => ({ executionId: e.executionId, nodeId: e.nodeId, reason: STOPPED_FOR_JOB_UPDATE }));
}
