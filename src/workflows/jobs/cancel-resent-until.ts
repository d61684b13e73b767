import { endedUnanswered } from "../../../machines/execution/execution-deadlines.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { lostWithNode } from "../../scheduler/job-outcome.ts";

/**
 * Until when an execution's node is sent CancelExecution again, or undefined when it is sent none: an execution the
 * orchestrator ended itself (cancelled; failed as unanswered or as lost with its node) may still run on its node, which
 * is told to stop it until it answers or the answer bound, counted from that end (the execution's last change), passes.
 * The node's answer is not stored: within the bound, a node that answered already is told once more and answers the
 * same. Read from the stored state alone, so the cancels a restart cut short are sent again. Pure.
 */
export function cancelResentUntil(
  execution: Pick<ExecutionState, "nodeId" | "computeState" | "computeMessage" | "modifyTime">,
  answerTimeoutMs: number,
): number | undefined {
  const { nodeId, computeState, computeMessage } = execution;
  if (nodeId === "") return undefined;
  const endedByOrchestrator =
    computeState === "Cancelled" ||
    (computeState === "Failed" && (endedUnanswered(execution) || lostWithNode(computeMessage)));
  return endedByOrchestrator ? execution.modifyTime + answerTimeoutMs : undefined;
}
