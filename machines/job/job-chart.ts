import { setup, type StateValue } from "xstate";
import type { JobEvent, JobStateName } from "../../src/events/catalog/job-events.ts";
import { compileChart } from "../compile-chart.ts";
import type { JobState } from "./job-state.ts";

/** A job's next version (an update, a rerun) makes it Pending again, from wherever it is. */
const NEXT_VERSION = { JobUpdated: { target: "pending" }, JobRerun: { target: "pending" } } as const;

/**
 * An update held for room, and its resumption, change the job's message, never its state: a job not yet ended stays
 * where it is.
 */
const HELD = (target: "pending" | "queued" | "running") =>
  ({ JobUpdateHeld: { target }, JobUpdateResumed: { target } }) as const;

/** Where a job not yet ended may go next. */
const ACTIVE = {
  ...NEXT_VERSION,
  JobQueued: { target: "queued" },
  JobStarted: { target: "running" },
  JobCompleted: { target: "completed" },
  JobFailed: { target: "failed" },
  JobStopped: { target: "stopped" },
} as const;

/**
 * A job's statechart over Bacalhau's job states: its events are its transitions. A job that
 * completed, failed or stopped moves only to a next version of itself (Bacalhau ≥ 1.8 updates and
 * reruns ended jobs). `decideJob` asks it whether the event a command causes
 * may happen now; `evolveJob` takes the next state from it.
 */
export const jobChart = setup({ types: { events: {} as JobEvent } }).createMachine({
  id: "job",
  initial: "absent",
  states: {
    absent: { on: { JobSubmitted: { target: "pending" } } },
    pending: { on: { ...ACTIVE, ...HELD("pending") } },
    // Queued again while queued: a new account of what it lacks (the decider writes one only when that changes).
    queued: {
      on: {
        ...NEXT_VERSION,
        ...HELD("queued"),
        JobQueued: ACTIVE.JobQueued,
        JobStarted: ACTIVE.JobStarted,
        JobCompleted: ACTIVE.JobCompleted,
        JobFailed: ACTIVE.JobFailed,
        JobStopped: ACTIVE.JobStopped,
      },
    },
    running: {
      on: {
        ...NEXT_VERSION,
        ...HELD("running"),
        JobQueued: ACTIVE.JobQueued,
        JobCompleted: ACTIVE.JobCompleted,
        JobFailed: ACTIVE.JobFailed,
        JobStopped: ACTIVE.JobStopped,
      },
    },
    completed: { on: NEXT_VERSION },
    failed: { on: NEXT_VERSION },
    stopped: { on: NEXT_VERSION },
  },
});

// The catalog's own literals, not strings made from the chart's keys: the fold compares and looks these up per event.
const STATES: Readonly<Record<string, JobStateName>> = {
  pending: "Pending",
  queued: "Queued",
  running: "Running",
  completed: "Completed",
  failed: "Failed",
  stopped: "Stopped",
};

/** The job state a chart state is (undefined: not submitted). */
function project(value: StateValue): JobStateName | undefined {
  if (value === "absent") return undefined;
  const state = STATES[value as string];
  if (state === undefined) throw new Error(`job chart: no such state ${JSON.stringify(value)}`);
  return state;
}

/** The job chart as a table, for the fold. */
export const jobTransitions = compileChart<JobStateName | undefined, JobState, JobEvent>(jobChart, project, {});

const INDEX: Readonly<Record<JobStateName | "absent", number>> = {
  absent: jobTransitions.indexOf("absent"),
  Pending: jobTransitions.indexOf("pending"),
  Queued: jobTransitions.indexOf("queued"),
  Running: jobTransitions.indexOf("running"),
  Completed: jobTransitions.indexOf("completed"),
  Failed: jobTransitions.indexOf("failed"),
  Stopped: jobTransitions.indexOf("stopped"),
};

/** Where a job is in its chart (the index `jobTransitions` takes). */
export const jobChartIndex = (state: JobState): number => INDEX[state.state ?? "absent"];
