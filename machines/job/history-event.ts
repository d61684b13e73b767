import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { heldMessage, queuedMessage, resumedMessage } from "./evolve-job.ts";

/**
 * Bacalhau's models.Event as its job history shows it (`GET /jobs/{id}/history`: JobHistory.Event),
 * less the Timestamp, which is the stored event's time. Topics and messages are Bacalhau's
 * (pkg/orchestrator/events.go, pkg/compute/events.go).
 */
export interface HistoryEvent {
  readonly Topic: string;
  readonly Message: string;
  readonly Details: Readonly<Record<string, string>>;
}

const TIMEOUT_HINT = "Increase the task timeout or allocate more resources";
const ERROR = { IsError: "true" } as const;
const UNANSWERED_HINT = "The node is connected but did not answer its work: check its agent and its executor";

/** The job-level history entry of a job event. */
export function jobHistoryEvent(event: JobEvent): HistoryEvent {
  switch (event.type) {
    case "JobSubmitted":
      return { Topic: "Submission", Message: "Job submitted", Details: {} };
    case "JobQueued":
      return { Topic: "Queueing", Message: queuedMessage(event.data.Reason), Details: {} };
    case "JobUpdateHeld":
      return { Topic: "Scheduling", Message: heldMessage(event.data.Version, event.data.Reason), Details: {} };
    case "JobUpdateResumed":
      return { Topic: "Scheduling", Message: resumedMessage(event.data.Version), Details: {} };
    case "JobStarted":
      return { Topic: "State Update", Message: "Running", Details: { NewState: "Running" } };
    case "JobCompleted":
      return { Topic: "State Update", Message: "Completed", Details: { NewState: "Completed" } };
    case "JobFailed":
      return event.data.Cause === "TotalTimeout"
        ? {
            Topic: "Job Timeout",
            Message: event.data.Message,
            Details: { ...ERROR, Hint: TIMEOUT_HINT, FailsExecution: "true" },
          }
        : { Topic: "Scheduling", Message: event.data.Message, Details: ERROR };
    case "JobStopped":
      return {
        Topic: "Scheduling",
        Message: "Job requested to stop before completion",
        Details: { Reason: event.data.Reason },
      };
    case "JobUpdated":
      return { Topic: "Submission", Message: "Job updated", Details: {} };
    case "JobRerun":
      return { Topic: "Submission", Message: "Job rerun requested", Details: { Reason: event.data.Reason } };
  }
}

/**
 * The execution-level history entry of an execution event, or undefined for the step Bacalhau
 * records none for (asking for a bid). The node's answer to a bid is recorded either way, as
 * Bacalhau ≥ 1.6 stores the bid result's event (compute `RespondedToBidEvent`: the reason, or
 * "Accepted job"). `reason` is the event's recorded reason (its metadata): for a retry, which
 * execution it replaces and why that one ended.
 */
export function executionHistoryEvent(event: ExecutionEvent, reason?: string): HistoryEvent | undefined {
  switch (event.type) {
    case "ExecutionCreated": {
      const requested = `Requested execution on ${event.data.NodeID}`;
      if (event.data.PreviousExecution === "")
        return { Topic: "Scheduling", Message: requested, Details: { NodeID: event.data.NodeID } };
      // Bacalhau's entry says nothing of a retry; Shoal's says what it replaces and why.
      const why = reason === undefined || reason === "" ? `replacing ${event.data.PreviousExecution}` : reason;
      return {
        Topic: "Scheduling",
        Message: `${requested} (${why})`,
        Details: { NodeID: event.data.NodeID, PreviousExecution: event.data.PreviousExecution },
      };
    }
    case "ExecutionBidAsked":
      return undefined;
    case "ExecutionBidAccepted":
      return { Topic: "Exec Scanning", Message: "Accepted job", Details: {} };
    case "ExecutionBidDeclined":
      return { Topic: "Exec Scanning", Message: event.data.Reason, Details: {} };
    case "ExecutionApproved":
    case "ExecutionStarted":
      return { Topic: "Execution", Message: "Running", Details: {} };
    case "ExecutionRejected":
      return { Topic: "Scheduling", Message: event.data.Reason, Details: {} };
    case "ExecutionCompleted":
      return { Topic: "Execution", Message: "Completed successfully", Details: {} };
    case "ExecutionFailed":
      switch (event.data.Cause) {
        case "ExecutionTimeout":
          return {
            Topic: "Exec Timeout",
            Message: event.data.Message,
            Details: { ...ERROR, Hint: TIMEOUT_HINT, FailsExecution: "true" },
          };
        case "Orchestrator":
          return { Topic: "Scheduling", Message: event.data.Message, Details: ERROR };
        case "Unanswered":
          return { Topic: "Scheduling", Message: event.data.Message, Details: { ...ERROR, Hint: UNANSWERED_HINT } };
        default:
          return { Topic: "Execution", Message: event.data.Message, Details: ERROR };
      }
    case "ExecutionCancelled":
      return { Topic: "Scheduling", Message: event.data.Reason, Details: {} };
    // Bacalhau's history has no such entry: the output is the execution's, served with it and by the logs.
    case "ExecutionOutputKept":
      return undefined;
  }
}
