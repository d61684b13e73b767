import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { executionChartIndex, executionTransitions } from "./execution-chart.ts";
import { DEFAULT_ANSWER_TIMEOUT_MS, type ExecutionState } from "./execution-state.ts";

const TO = executionTransitions.columns;

/**
 * Folds one stored event into an execution's state: the one fold of an execution stream, for its
 * actor and the read model alike. Every event is an update: Revision +1, ModifyTime = its time
 * (Bacalhau's job store). The compute state comes from the execution's chart (its column for the
 * event's type, read by name: the fold is hot); this adds the event's data, and the messages are
 * Bacalhau's. An event the chart does not take in the execution's state (which the decider never
 * produces: a second creation, a change after a compute-terminal state) leaves the state as it is.
 */
export function evolveExecution(state: ExecutionState, event: ExecutionEvent, time: string): ExecutionState {
  const from = executionChartIndex(state);
  switch (event.type) {
    case "ExecutionCreated": {
      const to = TO.ExecutionCreated[from];
      if (to === undefined) return state;
      const d = event.data;
      const at = Date.parse(time);
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
    case "ExecutionBidAsked": {
      const to = TO.ExecutionBidAsked[from];
      if (to === undefined) return state;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage: "",
      };
    }
    case "ExecutionBidAccepted": {
      const to = executionTransitions.choices.ExecutionBidAccepted[from]?.pick(state, event);
      if (to === undefined) return state;
      const s = { ...state, revision: state.revision + 1, modifyTime: Date.parse(time), computeState: to };
      // Taken by a direct execution's node, it is executing from now (the chart's target says which).
      return to === "BidAccepted"
        ? { ...s, computeMessage: "", executingSince: s.modifyTime }
        : { ...s, computeMessage: "" };
    }
    case "ExecutionBidDeclined": {
      const to = TO.ExecutionBidDeclined[from];
      if (to === undefined) return state;
      const computeMessage = event.data.Reason;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage,
        desiredState: "Stopped",
        desiredMessage: "bid rejected",
      };
    }
    case "ExecutionApproved": {
      const to = TO.ExecutionApproved[from];
      if (to === undefined) return state;
      const s = { ...state, revision: state.revision + 1, modifyTime: Date.parse(time), computeState: to };
      return {
        ...s,
        computeMessage: "Running",
        desiredState: "Running",
        desiredMessage: "Running",
        executingSince: s.modifyTime,
      };
    }
    case "ExecutionRejected": {
      const to = TO.ExecutionRejected[from];
      if (to === undefined) return state;
      const reason = event.data.Reason;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage: reason,
        desiredState: "Stopped",
        desiredMessage: reason,
      };
    }
    case "ExecutionStarted": {
      const to = TO.ExecutionStarted[from];
      if (to === undefined) return state;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage: "",
        limits: event.data.Details ?? state.limits,
      };
    }
    case "ExecutionCompleted": {
      const to = TO.ExecutionCompleted[from];
      if (to === undefined) return state;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage: "",
        desiredState: "Stopped",
        desiredMessage: "execution completed",
        runOutput: event.data.RunOutput,
        ...(event.data.PublishedResult === undefined ? {} : { publishedResult: event.data.PublishedResult }),
      };
    }
    case "ExecutionFailed": {
      const to = TO.ExecutionFailed[from];
      if (to === undefined) return state;
      const message = event.data.Message;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage: message,
        desiredState: "Stopped",
        desiredMessage: message,
        runOutput: event.data.RunOutput ?? state.runOutput,
      };
    }
    case "ExecutionCancelled": {
      const to = TO.ExecutionCancelled[from];
      if (to === undefined) return state;
      const reason = event.data.Reason;
      return {
        ...state,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        computeState: to,
        computeMessage: reason,
        desiredState: "Stopped",
        desiredMessage: reason,
      };
    }
    case "ExecutionOutputKept": {
      if (TO.ExecutionOutputKept[from] === undefined) return state;
      return { ...state, revision: state.revision + 1, modifyTime: Date.parse(time), runOutput: event.data.RunOutput };
    }
  }
}
