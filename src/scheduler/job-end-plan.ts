import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import type { JobState } from "../../machines/job/job-state.ts";
import { isTerminal } from "./execution-states.ts";
import { toExisting } from "./existing-execution.ts";
import { EMPTY_PLAN, type JobPlan } from "./job-plan.ts";

/** Why an execution is cancelled when its job fails, or is stopped (Bacalhau's texts, scheduler v1.7). */
export const JOB_FAILED_CANCEL = "Execution stopped due to job failure";
export const JOB_STOPPED_CANCEL = "Execution stop requested because job has been stopped";

/**
 * A job that ended: its executions still under way are cancelled, and their nodes told to stop them, with Bacalhau's
 * reasons (the job's own message, the operator's stop reason or what failed, is in the job's history).
 */
export function jobEndPlan(job: Pick<JobState, "state">, executions: readonly ExecutionState[]): JobPlan {
  const reason = job.state === "Failed" ? JOB_FAILED_CANCEL : JOB_STOPPED_CANCEL;
  const cancel = executions
    .filter((e) => !isTerminal(toExisting(e)))
    .map((e) => ({ executionId: e.executionId, nodeId: e.nodeId, reason }));
  return { ...EMPTY_PLAN, cancel };
}
