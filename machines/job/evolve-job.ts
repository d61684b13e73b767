import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { jobChartIndex, jobTransitions } from "./job-chart.ts";
import type { JobState } from "./job-state.ts";

/** Bacalhau's job-queued message (pkg/orchestrator/events.go: JobQueueingEvent). */
export const queuedMessage = (reason: string): string => (reason === "" ? "Job queued" : `Job queued. ${reason}`);

/**
 * Folds one stored event into a job's state: the one fold of a job stream, used by its actor and
 * by the read model alike. Every event is a state change: Revision +1 and ModifyTime = its time,
 * as Bacalhau's job store does. The job's state comes from its chart; this adds the event's data.
 * An event the chart does not take in the job's state (which the decider never produces: a second
 * submission, a change to a terminal job) leaves it as it is.
 */
export function evolveJob(state: JobState, event: JobEvent, time: string): JobState {
  const to = jobTransitions.next(jobChartIndex(state), event, state);
  if (to === undefined) return state;
  const at = Date.parse(time);
  if (event.type === "JobSubmitted") {
    const d = event.data;
    return {
      ...state,
      spec: d.Job,
      state: to,
      message: "",
      version: d.Version,
      revision: 1,
      createTime: at,
      modifyTime: at,
      warnings: d.Warnings,
    };
  }
  const changed = { revision: state.revision + 1, modifyTime: at, state: to };
  switch (event.type) {
    case "JobQueued":
      return {
        ...state,
        ...changed,
        message: queuedMessage(event.data.Reason),
        queueReason: event.data.Reason,
      };
    case "JobStarted":
      return { ...state, ...changed, message: "" };
    case "JobCompleted":
      return { ...state, ...changed, message: "" };
    case "JobFailed":
      return { ...state, ...changed, message: event.data.Message };
    case "JobStopped":
      return { ...state, ...changed, message: event.data.Reason };
  }
}
