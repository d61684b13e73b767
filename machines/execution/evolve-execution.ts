import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { DEFAULT_ANSWER_TIMEOUT_MS, type ExecutionState } from "./execution-state.ts";
import { isTerminalComputeState } from "./execution-states.ts";

/**
 * Folds one stored event into an execution's state: the one fold of an execution stream, for its
 * actor and the read model alike. Every event is an update: Revision +1, ModifyTime = its time
 * (Bacalhau's job store). The state messages are Bacalhau's. An event that does not fit (which
 * the decider never produces: a second creation, a change after a compute-terminal state) leaves
 * the state as it is.
 */
export function evolveExecution(state: ExecutionState, event: ExecutionEvent, time: string): ExecutionState {
  const at = Date.parse(time);
  if (event.type === "ExecutionCreated") {
    if (state.computeState !== undefined) return state;
    const d = event.data;
    return {
      ...state,
      jobId: d.JobID,
      namespace: d.Namespace,
      nodeId: d.NodeID,
      jobType: d.JobType,
      jobVersion: d.JobVersion,
      partitionIndex: d.PartitionIndex,
      computeState: "New",
      desiredState: d.DesiredState,
      allocatedResources: d.AllocatedResources,
      executionTimeout: d.ExecutionTimeout,
      timeoutBuffer: d.TimeoutBuffer,
      previousExecution: d.PreviousExecution,
      answerTimeoutMs: d.AnswerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS,
      revision: 1,
      createTime: at,
      modifyTime: at,
    };
  }
  if (state.computeState === undefined || isTerminalComputeState(state.computeState)) return state;
  const s = { ...state, revision: state.revision + 1, modifyTime: at };
  switch (event.type) {
    case "ExecutionBidAsked":
      return { ...s, computeState: "AskForBid", computeMessage: "" };
    case "ExecutionBidAccepted":
      return state.desiredState === "Running"
        ? { ...s, computeState: "BidAccepted", computeMessage: "", executingSince: at }
        : { ...s, computeState: "AskForBidAccepted", computeMessage: "" };
    case "ExecutionBidDeclined":
      return {
        ...s,
        computeState: "AskForBidRejected",
        computeMessage: event.data.Reason,
        desiredState: "Stopped",
        desiredMessage: "bid rejected",
      };
    case "ExecutionApproved":
      return {
        ...s,
        computeState: "BidAccepted",
        computeMessage: "Running",
        desiredState: "Running",
        desiredMessage: "Running",
        executingSince: at,
      };
    case "ExecutionRejected":
      return {
        ...s,
        computeState: "BidRejected",
        computeMessage: event.data.Reason,
        desiredState: "Stopped",
        desiredMessage: event.data.Reason,
      };
    case "ExecutionStarted":
      return { ...s, computeState: "Running", computeMessage: "", limits: event.data.Details ?? state.limits };
    case "ExecutionCompleted":
      return {
        ...s,
        computeState: "Completed",
        computeMessage: "",
        desiredState: "Stopped",
        desiredMessage: "execution completed",
        runOutput: event.data.RunOutput,
      };
    case "ExecutionFailed":
      return {
        ...s,
        computeState: "Failed",
        computeMessage: event.data.Message,
        desiredState: "Stopped",
        desiredMessage: event.data.Message,
        runOutput: event.data.RunOutput ?? state.runOutput,
      };
    case "ExecutionCancelled":
      return {
        ...s,
        computeState: "Cancelled",
        computeMessage: event.data.Reason,
        desiredState: "Stopped",
        desiredMessage: event.data.Reason,
      };
  }
}
