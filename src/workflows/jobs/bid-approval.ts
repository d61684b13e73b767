import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { isTerminalComputeState } from "../../../machines/execution/execution-states.ts";

/** Bacalhau's message for executions a partition does not need (pkg/orchestrator/events.go). */
export const MORE_THAN_NEEDED = "Execution stop requested because there are more executions than needed";

/** What the orchestrator does with a job's executions once bids came in: approve (run), reject a bid, cancel. */
export interface ApprovalPlan {
  readonly approve: readonly string[];
  readonly reject: readonly string[];
  readonly cancel: readonly string[];
}

type Candidate = Pick<
  ExecutionState,
  "executionId" | "partitionIndex" | "computeState" | "desiredState" | "createTime"
>;

/** Oldest first; executions created in the same millisecond go by id, so the choice never depends on read order. */
const oldestFirst = (a: Candidate, b: Candidate) =>
  a.createTime - b.createTime || (a.executionId < b.executionId ? -1 : a.executionId > b.executionId ? 1 : 0);

/**
 * Bacalhau v1.7's approval per partition (scheduler `getApprovalStatuses`), for a batch or service
 * job's executions. In each partition: when one completed, accepted bids are rejected and every
 * other execution under way cancelled; else when one is already meant to run (desired Running),
 * the oldest of those stays, accepted bids are rejected and the other runners cancelled; else the
 * oldest accepted bid is approved and the other accepted bids rejected. Executions still waiting
 * for their node's answer are left alone: when it comes, this runs again. Pure.
 */
export function approvalsOf(executions: readonly Candidate[]): ApprovalPlan {
  const approve: string[] = [];
  const reject: string[] = [];
  const cancel: string[] = [];
  const partitions = new Map<number, Candidate[]>();
  for (const e of executions) {
    const list = partitions.get(e.partitionIndex);
    if (list) list.push(e);
    else partitions.set(e.partitionIndex, [e]);
  }
  for (const list of partitions.values()) {
    const live = list
      .filter(
        (e) => e.computeState !== undefined && !isTerminalComputeState(e.computeState) && e.desiredState !== "Stopped",
      )
      .sort(oldestFirst);
    const accepted = live.filter((e) => e.computeState === "AskForBidAccepted" && e.desiredState === "Pending");
    const runners = live.filter((e) => e.desiredState === "Running");
    if (list.some((e) => e.computeState === "Completed")) {
      reject.push(...accepted.map((e) => e.executionId));
      cancel.push(...live.filter((e) => !accepted.includes(e)).map((e) => e.executionId));
    } else if (runners.length > 0) {
      reject.push(...accepted.map((e) => e.executionId));
      cancel.push(...runners.slice(1).map((e) => e.executionId));
    } else if (accepted.length > 0) {
      approve.push(accepted[0]!.executionId);
      reject.push(...accepted.slice(1).map((e) => e.executionId));
    }
  }
  return { approve, reject, cancel };
}
