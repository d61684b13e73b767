import type { Deadline } from "../decider.ts";
import { goDuration } from "../job/go-duration.ts";
import type { ExecutionCommand } from "./execution-commands.ts";
import type { ExecutionState } from "./execution-state.ts";
import { isExecuting } from "./execution-states.ts";

/**
 * When the orchestrator fails an execution that is still executing: ExecutionTimeout plus the
 * buffer after it began executing (Bacalhau's housekeeping: the node enforces the timeout itself
 * and reports first; this catches a node that does not). Undefined when none applies.
 */
export function executionDeadline(state: ExecutionState): number | undefined {
  if (state.computeState === undefined || !isExecuting(state.computeState)) return undefined;
  if (state.executionTimeout <= 0 || state.executingSince === undefined) return undefined;
  return state.executingSince + (state.executionTimeout + state.timeoutBuffer) * 1000;
}

/**
 * What the execution's node owes the orchestrator now: its answer to AskForBid (a batch or service
 * execution not yet bid on), to RunExecution (an ops or daemon one it has not taken yet), or its
 * start (told to run it: approved, or a direct bid it took). Undefined while the next move is the
 * orchestrator's (approving a bid) or the execution runs or ended. These are the states in which
 * the orchestrator sends the work again (docs/jobs.md, Dispatch).
 */
export type AwaitedAnswer = "AskForBid" | "RunExecution" | "Start";

export function awaitedAnswer(state: Pick<ExecutionState, "computeState" | "desiredState">): AwaitedAnswer | undefined {
  const { computeState, desiredState } = state;
  if (desiredState === "Pending") {
    return computeState === "New" || computeState === "AskForBid" ? "AskForBid" : undefined;
  }
  if (desiredState === "Running") {
    if (computeState === "New") return "RunExecution";
    if (computeState === "BidAccepted") return "Start";
  }
  return undefined;
}

/**
 * When an execution whose node owes an answer ends unanswered: its answer bound after it came to
 * owe it (its last change: created, approved, or its direct bid taken). Undefined when nothing is owed.
 */
export function answerDeadline(state: ExecutionState): number | undefined {
  return awaitedAnswer(state) === undefined ? undefined : state.modifyTime + state.answerTimeoutMs;
}

/** How an unanswered execution's message begins (its node, what it did not answer, for how long). */
export const UNANSWERED_PREFIX = "Execution unanswered: node ";

/** Whether the execution ended because its node never answered its work (TimeOutAnswer). */
export const endedUnanswered = (state: Pick<ExecutionState, "computeState" | "computeMessage">): boolean =>
  state.computeState === "Failed" && state.computeMessage.startsWith(UNANSWERED_PREFIX);

/** A bound as Go writes a duration (`5m0s`, `3s`), or in ms when it is not whole seconds. */
const boundText = (ms: number): string => (ms % 1000 === 0 ? goDuration(ms / 1000) : `${ms}ms`);

/** Why an execution ended unanswered: `Execution unanswered: node n-1 did not answer AskForBid within 5m0s`. */
export function unansweredMessage(nodeId: string, awaited: AwaitedAnswer, answerTimeoutMs: number): string {
  const bound = boundText(answerTimeoutMs);
  return awaited === "Start"
    ? `${UNANSWERED_PREFIX}${nodeId} did not report it started within ${bound} of being told to run it (RunExecution)`
    : `${UNANSWERED_PREFIX}${nodeId} did not answer ${awaited} within ${bound}`;
}

export function executionDeadlines(state: ExecutionState): readonly Deadline<ExecutionCommand>[] {
  const deadlines: Deadline<ExecutionCommand>[] = [];
  const at = executionDeadline(state);
  if (at !== undefined) deadlines.push({ name: "execution-timeout", at, command: { type: "TimeOutExecution" } });
  const answerAt = answerDeadline(state);
  // The node's silence is judged only over time the orchestrator itself could hear it (listenMs).
  if (answerAt !== undefined) {
    const listenMs = state.answerTimeoutMs;
    deadlines.push({ name: "answer-timeout", at: answerAt, command: { type: "TimeOutAnswer" }, listenMs });
  }
  return deadlines;
}
