import { accept, refuse, type Decision } from "../decider.ts";
import type { ExecutionEvent, ExecutionEventType } from "../../src/events/catalog/execution-events.ts";
import { isExecutionId, isJobId } from "../job/job-id.ts";
import { goDuration } from "../job/go-duration.ts";
import { isLongRunning } from "../job/job-spec.ts";
import { executionChartIndex, executionTransitions } from "./execution-chart.ts";
import type { ExecutionCommand, ExecutionCommandType, ExecutionRefusal } from "./execution-commands.ts";
import { answerDeadline, awaitedAnswer, executionDeadline, unansweredMessage } from "./execution-deadlines.ts";
import type { ExecutionState } from "./execution-state.ts";
import { COMPUTE_STATES, isTerminalComputeState, type ComputeStateName } from "./execution-states.ts";

export type ExecutionDecision = Decision<ExecutionEvent, ExecutionRefusal>;

/** The compute state a command would move the execution to (for Bacalhau's terminal-state message). */
const TARGET: Partial<Record<ExecutionCommand["type"], string>> = {
  AskForBid: "AskForBid",
  AcceptBid: "AskForBidAccepted",
  DeclineBid: "AskForBidRejected",
  Approve: "BidAccepted",
  Reject: "BidRejected",
  Start: "Running",
  Complete: "Completed",
  Fail: "Failed",
  Cancel: "Cancelled",
  KeepOutput: "Cancelled with its output",
};

/** The event each command causes: what the chart is asked about before anything else is checked. */
const CAUSES: Readonly<Record<ExecutionCommandType, ExecutionEventType>> = {
  Create: "ExecutionCreated",
  AskForBid: "ExecutionBidAsked",
  AcceptBid: "ExecutionBidAccepted",
  DeclineBid: "ExecutionBidDeclined",
  Approve: "ExecutionApproved",
  Reject: "ExecutionRejected",
  Start: "ExecutionStarted",
  // A long-running execution that completes is recorded as failed, but where it may complete is the chart's answer.
  Complete: "ExecutionCompleted",
  Fail: "ExecutionFailed",
  Cancel: "ExecutionCancelled",
  KeepOutput: "ExecutionOutputKept",
  TimeOutExecution: "ExecutionFailed",
  TimeOutAnswer: "ExecutionFailed",
};

const BID_ACCEPTED = executionChartIndex({ computeState: "BidAccepted" });
const RUNNING = executionChartIndex({ computeState: "Running" });

/**
 * Whether a command may happen in the chart state at `from`: the chart takes the event it causes
 * (a node that declines what it was approved for fails it), or the command repeats where the
 * execution already is (Start on a Running execution, Cancel on a Cancelled one), which is legal
 * and writes nothing so that workflows and nodes may send it again. A node's answer to a resent
 * RunExecution (its bid again) reaches a Running execution: acknowledged, nothing changes. A
 * second creation is no repeat but a conflict.
 */
function isLegalIn(from: number, type: ExecutionCommandType): boolean {
  const event = type === "DeclineBid" && from === BID_ACCEPTED ? "ExecutionFailed" : CAUSES[type];
  if (type !== "Create" && executionTransitions.leadsTo(event).has(from)) return true;
  if ((type === "AcceptBid" || type === "DeclineBid") && from === RUNNING) return true;
  return executionTransitions.allows(from, event);
}

/** The compute states in which a command is legal, for the message that refuses it elsewhere. */
const statesAccepting = (type: ExecutionCommandType): ComputeStateName[] =>
  COMPUTE_STATES.filter(
    (s): s is ComputeStateName => s !== "Undefined" && isLegalIn(executionChartIndex({ computeState: s }), type),
  );

function refusal(command: ExecutionCommand, state: ExecutionState): ExecutionRefusal {
  const id = state.executionId;
  const current = state.computeState;
  if (current === undefined) return { code: "NotFound", message: `execution not found: ${id}` };
  if (command.type === "Create") return { code: "Conflict", message: `execution ${id} already exists` };
  if (isTerminalComputeState(current)) {
    return {
      code: "Conflict",
      message: `execution ${id} is in terminal state ${current} and cannot transition to ${TARGET[command.type] ?? command.type}`,
    };
  }
  return {
    code: "Conflict",
    message: `execution ${id} is in state ${current}, but ${command.type} expects ${statesAccepting(command.type).join(", ")}`,
  };
}

/**
 * The execution's rules: given a command and the execution's state, which events happen, or
 * why not. Legality comes from the chart (`isLegalIn`); a repeat of what already happened writes nothing;
 * a timeout that no longer applies is a no-op.
 */
export function decideExecution(command: ExecutionCommand, state: ExecutionState, now: number): ExecutionDecision {
  const ExecutionID = state.executionId;
  if (!isLegalIn(executionChartIndex(state), command.type)) {
    return isTimeout(command) ? accept([]) : refuse(refusal(command, state));
  }

  if (command.type === "Create") {
    if (!isExecutionId(ExecutionID))
      return refuse({ code: "Conflict", message: `an execution's id is e-<uuid>, not ${JSON.stringify(ExecutionID)}` });
    if (!isJobId(command.jobId))
      return refuse({
        code: "Conflict",
        message: `an execution belongs to a job j-<uuid>, not ${JSON.stringify(command.jobId)}`,
      });
    return accept([
      {
        type: "ExecutionCreated",
        data: {
          ExecutionID,
          JobID: command.jobId,
          Namespace: command.namespace,
          NodeID: command.nodeId,
          JobType: command.jobType,
          JobVersion: command.jobVersion,
          PartitionIndex: command.partitionIndex,
          // Bacalhau: batch and service executions wait for the orchestrator's approval; ops and daemon run directly.
          DesiredState: command.jobType === "ops" || command.jobType === "daemon" ? "Running" : "Pending",
          AllocatedResources: command.resources,
          ExecutionTimeout: isLongRunning(command.jobType) ? 0 : command.executionTimeout,
          TimeoutBuffer: command.timeoutBuffer,
          PreviousExecution: command.previousExecution ?? "",
          ...(command.answerTimeoutMs === undefined ? {} : { AnswerTimeoutMs: command.answerTimeoutMs }),
        },
      },
    ]);
  }

  const current = state.computeState;
  if (current === undefined) return refuse(refusal(command, state));
  const NodeID = state.nodeId;
  switch (command.type) {
    case "AskForBid":
      return current === "AskForBid"
        ? accept([])
        : accept([{ type: "ExecutionBidAsked", data: { ExecutionID, NodeID } }]);
    case "AcceptBid":
      // Past the bid (approved, executing) a repeat of the node's answer changes nothing.
      if (current !== "New" && current !== "AskForBid") return accept([]);
      return accept([
        {
          type: "ExecutionBidAccepted",
          data: state.desiredState === "Running" ? { ExecutionID, NodeID, Direct: true } : { ExecutionID, NodeID },
        },
      ]);
    case "DeclineBid":
      // a stale answer: the node runs it
      if (current === "AskForBidRejected" || current === "Running") return accept([]);
      if (current === "BidAccepted") {
        // Approved (or a direct bid) and then refused by the node when told to run: it ran nothing, and ends.
        return accept([
          { type: "ExecutionFailed", data: { ExecutionID, Previous: current, Cause: "Node", Message: command.reason } },
        ]);
      }
      return accept([{ type: "ExecutionBidDeclined", data: { ExecutionID, NodeID, Reason: command.reason } }]);
    case "Approve":
      return current === "BidAccepted" ? accept([]) : accept([{ type: "ExecutionApproved", data: { ExecutionID } }]);
    case "Reject":
      return current === "BidRejected"
        ? accept([])
        : accept([{ type: "ExecutionRejected", data: { ExecutionID, Reason: command.reason } }]);
    case "Start":
      if (current === "Running") return accept([]);
      if (command.details === undefined) return accept([{ type: "ExecutionStarted", data: { ExecutionID } }]);
      return accept([{ type: "ExecutionStarted", data: { ExecutionID, Details: { ...command.details } } }]);
    case "Complete":
      if (current === "Completed") return accept([]);
      if (state.jobType !== undefined && isLongRunning(state.jobType)) {
        // Bacalhau: a service or daemon execution that ends has failed, whatever its exit code.
        return accept([
          {
            type: "ExecutionFailed",
            data: {
              ExecutionID,
              Previous: current,
              Cause: "CompletedUnexpectedly",
              Message: "execution completed unexpectedly",
              RunOutput: command.output,
            },
          },
        ]);
      }
      return accept([
        {
          type: "ExecutionCompleted",
          data: {
            ExecutionID,
            RunOutput: command.output,
            ...(command.publishedResult === undefined ? {} : { PublishedResult: command.publishedResult }),
          },
        },
      ]);
    case "Fail":
      if (current === "Failed") return accept([]);
      return accept([
        {
          type: "ExecutionFailed",
          data:
            command.output === undefined
              ? { ExecutionID, Previous: current, Cause: command.cause, Message: command.reason }
              : {
                  ExecutionID,
                  Previous: current,
                  Cause: command.cause,
                  Message: command.reason,
                  RunOutput: command.output,
                },
        },
      ]);
    case "Cancel":
      return current === "Cancelled"
        ? accept([])
        : accept([{ type: "ExecutionCancelled", data: { ExecutionID, Previous: current, Reason: command.reason } }]);
    case "KeepOutput":
      // Kept once: the node's end report is sent again until answered, and the first one's output stands.
      return state.runOutput !== undefined
        ? accept([])
        : accept([{ type: "ExecutionOutputKept", data: { ExecutionID, RunOutput: command.output } }]);
    case "TimeOutExecution": {
      const at = executionDeadline(state);
      if (at === undefined || now < at) return accept([]);
      const message = `Execution timed out. Execution took longer than ${goDuration(state.executionTimeout)}`;
      return accept([
        {
          type: "ExecutionFailed",
          data: { ExecutionID, Previous: current, Cause: "ExecutionTimeout", Message: message },
        },
      ]);
    }
    case "TimeOutAnswer": {
      const at = answerDeadline(state);
      const awaited = awaitedAnswer(state);
      if (at === undefined || awaited === undefined || now < at) return accept([]);
      // Bacalhau's lost execution: Failed, and its partition placed again (not on this node).
      const message = unansweredMessage(NodeID, awaited, state.answerTimeoutMs);
      const data = { ExecutionID, Previous: current, Cause: "Unanswered", Message: message } as const;
      return accept([{ type: "ExecutionFailed", data }]);
    }
  }
}

/** A deadline's command: where it no longer applies it changes nothing, and is never refused. */
const isTimeout = (command: ExecutionCommand): boolean =>
  command.type === "TimeOutExecution" || command.type === "TimeOutAnswer";
