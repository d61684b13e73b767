import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { executionChartIndex, executionTransitions } from "./execution-chart.ts";
import { DEFAULT_ANSWER_TIMEOUT_MS, type ExecutionState } from "./execution-state.ts";

/**
 * Folds one stored event into an execution's state: the one fold of an execution stream, for its
 * actor and the read model alike. Every event is an update: Revision +1, ModifyTime = its time
 * (Bacalhau's job store). The compute state comes from the execution's chart; this adds the
 * event's data, and the messages are Bacalhau's. An event the chart does not take in the
 * execution's state (which the decider never produces: a second creation, a change after a
 * compute-terminal state) leaves the state as it is.
 */
export function evolveExecution(state: ExecutionState, event: ExecutionEvent, time: string): ExecutionState {
  const to = executionTransitions.next(executionChartIndex(state), event, state);
  if (to === undefined) return state;
  const at = Date.parse(time);
  if (event.type === "ExecutionCreated") {
    const d = event.data;
    return {
      ...state,
      jobId: d.JobID,
      namespace: d.Namespace,
      nodeId: d.NodeID,
      jobType: d.JobType,
      jobVersion: d.JobVersion,
      partitionIndex: d.PartitionIndex,
      computeState: to,
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
  const s = { ...state, revision: state.revision + 1, modifyTime: at, computeState: to };
  switch (event.type) {
    case "ExecutionBidAsked":
      return { ...s, computeMessage: "" };
    case "ExecutionBidAccepted":
      // Taken by a direct execution's node, it is executing from now (the chart's target says which).
      return to === "BidAccepted" ? { ...s, computeMessage: "", executingSince: at } : { ...s, computeMessage: "" };
    case "ExecutionBidDeclined":
      return {
        ...s,
        computeMessage: event.data.Reason,
        desiredState: "Stopped",
        desiredMessage: "bid rejected",
      };
    case "ExecutionApproved":
      return {
        ...s,
        computeMessage: "Running",
        desiredState: "Running",
        desiredMessage: "Running",
        executingSince: at,
      };
    case "ExecutionRejected":
      return {
        ...s,
        computeMessage: event.data.Reason,
        desiredState: "Stopped",
        desiredMessage: event.data.Reason,
      };
    case "ExecutionStarted":
      return { ...s, computeMessage: "", limits: event.data.Details ?? state.limits };
    case "ExecutionCompleted":
      return {
        ...s,
        computeMessage: "",
        desiredState: "Stopped",
        desiredMessage: "execution completed",
        runOutput: event.data.RunOutput,
      };
    case "ExecutionFailed":
      return {
        ...s,
        computeMessage: event.data.Message,
        desiredState: "Stopped",
        desiredMessage: event.data.Message,
        runOutput: event.data.RunOutput ?? state.runOutput,
      };
    case "ExecutionCancelled":
      return {
        ...s,
        computeMessage: event.data.Reason,
        desiredState: "Stopped",
        desiredMessage: event.data.Reason,
      };
  }
}
