import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { jobChartIndex, jobTransitions } from "./job-chart.ts";
import type { JobSpec } from "./job-spec.ts";
import type { JobState, JobStateName, JobVersionRecord } from "./job-state.ts";

/** Bacalhau's job-queued message (pkg/orchestrator/events.go: JobQueueingEvent). */
export const queuedMessage = (reason: string): string => (reason === "" ? "Job queued" : `Job queued. ${reason}`);

/** The state message of a job whose current version waits for room (JobUpdateHeld). */
export const heldMessage = (version: number, reason: string): string =>
  `Version ${version} waits for room: the earlier version's executions run on until it can be placed. ${reason}`;

/** The state message, and history entry, of a held version that found room (JobUpdateResumed). */
export const resumedMessage = (version: number): string => `Version ${version} found room: its placement goes on`;

const TO = jobTransitions.columns;

/** Bacalhau's state messages of a job made Pending by its next version (its job store's UpdateJobState). */
export const UPDATED_MESSAGE = "Job update requested by user";
export const RERUN_MESSAGE = "job rerun";

/** The job at its next version: the spec that runs now, Pending, its timeouts counted from now; the last one kept. */
function nextVersion(
  state: JobState,
  to: JobStateName,
  next: { readonly version: number; readonly spec: JobSpec; readonly message: string },
  time: string,
  warnings: readonly string[],
): JobState {
  const { spec, state: was, version, message, revision, modifyTime } = state;
  if (spec === undefined || was === undefined) return state;
  const record: JobVersionRecord = {
    version,
    spec,
    state: was,
    message,
    revision,
    modifyTime,
    warnings: state.warnings,
  };
  const at = Date.parse(time);
  return {
    ...state,
    spec: next.spec,
    state: to,
    message: next.message,
    queueReason: "",
    heldReason: "",
    version: next.version,
    revision: state.revision + 1,
    modifyTime: at,
    versionTime: at,
    warnings,
    versions: [...state.versions, record],
  };
}

/**
 * Folds one stored event into a job's state: the one fold of a job stream, used by its actor and
 * by the read model alike. Every event is a state change: Revision +1 and ModifyTime = its time,
 * as Bacalhau's job store does. The job's state comes from its chart (its column for the event's
 * type, read by name: the fold is hot); this adds the event's data. An event the chart does not
 * take in the job's state (which the decider never produces: a second submission, an ended job
 * queued or started) leaves it as it is.
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
        versionTime: at,
        warnings: d.Warnings,
        ...(d.IdempotencyToken === undefined ? {} : { tokens: { [d.IdempotencyToken]: d.Version } }),
      };
    }
    case "JobUpdated": {
      const to = TO.JobUpdated[from];
      if (to === undefined) return state;
      const d = event.data;
      const next = nextVersion(
        state,
        to,
        { version: d.Version, spec: d.Job, message: UPDATED_MESSAGE },
        time,
        d.Warnings,
      );
      if (d.IdempotencyToken === undefined) return next;
      return { ...next, tokens: { ...state.tokens, [d.IdempotencyToken]: d.Version } };
    }
    case "JobRerun": {
      const to = TO.JobRerun[from];
      if (to === undefined) return state;
      const d = event.data;
      return nextVersion(state, to, { version: d.Version, spec: d.Job, message: RERUN_MESSAGE }, time, []);
    }
    case "JobQueued": {
      const to = TO.JobQueued[from];
      if (to === undefined) return state;
      const { Reason, Wanted } = event.data;
      const { queueWanted: _previous, ...rest } = state;
      return {
        ...rest,
        state: to,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        message: queuedMessage(Reason),
        queueReason: Reason,
        ...(Wanted === undefined ? {} : { queueWanted: Wanted }),
        heldReason: "",
      };
    }
    case "JobUpdateHeld": {
      const to = TO.JobUpdateHeld[from];
      if (to === undefined) return state;
      const { Version, Reason } = event.data;
      const message = heldMessage(Version, Reason);
      return {
        ...state,
        state: to,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        message,
        heldReason: Reason,
      };
    }
    case "JobUpdateResumed": {
      const to = TO.JobUpdateResumed[from];
      if (to === undefined) return state;
      return {
        ...state,
        state: to,
        revision: state.revision + 1,
        modifyTime: Date.parse(time),
        message: "",
        heldReason: "",
      };
    }
    case "JobStarted": {
      const to = TO.JobStarted[from];
      if (to === undefined) return state;
      // A held version running in part still waits for room for the rest: its message stays until it is resumed.
      const message = state.heldReason === "" ? "" : state.message;
      return { ...state, state: to, revision: state.revision + 1, modifyTime: Date.parse(time), message };
    }
    case "JobCompleted": {
      const to = TO.JobCompleted[from];
      if (to === undefined) return state;
      return ended(state, to, time, "");
    }
    case "JobFailed": {
      const to = TO.JobFailed[from];
      if (to === undefined) return state;
      return ended(state, to, time, event.data.Message);
    }
    case "JobStopped": {
      const to = TO.JobStopped[from];
      if (to === undefined) return state;
      return ended(state, to, time, event.data.Reason);
    }
  }
}

/** A job that ended: its end's message, and no longer held. */
function ended(state: JobState, to: JobStateName, time: string, message: string): JobState {
  return { ...state, state: to, revision: state.revision + 1, modifyTime: Date.parse(time), message, heldReason: "" };
}
