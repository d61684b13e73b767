import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { jobChartIndex, jobTransitions } from "./job-chart.ts";
import type { JobState } from "./job-state.ts";

/** Bacalhau's job-queued message (pkg/orchestrator/events.go: JobQueueingEvent). */
export const queuedMessage = (reason: string): string => (reason === "" ? "Job queued" : `Job queued. ${reason}`);

const TO = jobTransitions.columns;

/**
 * Folds one stored event into a job's state: the one fold of a job stream, used by its actor and
 * by the read model alike. Every event is a state change: Revision +1 and ModifyTime = its time,
 * as Bacalhau's job store does. The job's state comes from its chart (its column for the event's
 * type, read by name: the fold is hot); this adds the event's data. An event the chart does not
 * take in the job's state (which the decider never produces: a second submission, a change to a
 * terminal job) leaves it as it is.
 */
export function evolveJob(state: JobState, event: JobEvent, time: string): JobState {
  const from = jobChartIndex(state);
  switch (event.type) {
    case "JobSubmitted": {
      const to = TO.JobSubmitted[from];
      if (to === undefined) return state;
      const d = event.data;
      const at = Date.parse(time);
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
    case "JobQueued": {
      const to = TO.JobQueued[from];
      if (to === undefined) return state;
      const { Reason } = event.data;
      const revision = state.revision + 1;
      return {
        ...state,
        state: to,
        revision,
        modifyTime: Date.parse(time),
        message: queuedMessage(Reason),
        queueReason: Reason,
      };
    }
    case "JobStarted": {
      const to = TO.JobStarted[from];
      if (to === undefined) return state;
      return { ...state, state: to, revision: state.revision + 1, modifyTime: Date.parse(time), message: "" };
    }
    case "JobCompleted": {
      const to = TO.JobCompleted[from];
      if (to === undefined) return state;
      return { ...state, state: to, revision: state.revision + 1, modifyTime: Date.parse(time), message: "" };
    }
    case "JobFailed": {
      const to = TO.JobFailed[from];
      if (to === undefined) return state;
      const message = event.data.Message;
      return { ...state, state: to, revision: state.revision + 1, modifyTime: Date.parse(time), message };
    }
    case "JobStopped": {
      const to = TO.JobStopped[from];
      if (to === undefined) return state;
      const message = event.data.Reason;
      return { ...state, state: to, revision: state.revision + 1, modifyTime: Date.parse(time), message };
    }
  }
}
