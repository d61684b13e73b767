import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import type { JobState } from "./job-state.ts";

/** Bacalhau's job-queued message (pkg/orchestrator/events.go: JobQueueingEvent). */
export const queuedMessage = (reason: string): string => (reason === "" ? "Job queued" : `Job queued. ${reason}`);

/**
 * Folds one stored event into a job's state: the one fold of a job stream, used by its actor and
 * by the read model alike. Every event is a state change: Revision +1 and ModifyTime = its time,
 * as Bacalhau's job store does. An event that does not fit the state (which the decider never
 * produces: a second submission, a change to a terminal job) leaves it as it is.
 */
export function evolveJob(state: JobState, event: JobEvent, time: string): JobState {
  const at = Date.parse(time);
  if (event.type === "JobSubmitted") {
    if (state.state !== undefined) return state;
    const d = event.data;
    return {
      ...state,
      spec: d.Job,
      state: "Pending",
      message: "",
      version: d.Version,
      revision: 1,
      createTime: at,
      modifyTime: at,
      warnings: d.Warnings,
    };
  }
  if (state.state !== "Pending" && state.state !== "Queued" && state.state !== "Running") return state;
  const changed = { revision: state.revision + 1, modifyTime: at };
  switch (event.type) {
    case "JobQueued":
      return {
        ...state,
        ...changed,
        state: "Queued",
        message: queuedMessage(event.data.Reason),
        queueReason: event.data.Reason,
      };
    case "JobStarted":
      return { ...state, ...changed, state: "Running", message: "" };
    case "JobCompleted":
      return { ...state, ...changed, state: "Completed", message: "" };
    case "JobFailed":
      return { ...state, ...changed, state: "Failed", message: event.data.Message };
    case "JobStopped":
      return { ...state, ...changed, state: "Stopped", message: event.data.Reason };
  }
}
