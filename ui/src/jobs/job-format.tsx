import { COMPUTE_STATES, DESIRED_STATES } from "../../../machines/execution/execution-states.ts";
import type { Job } from "../api/types.ts";

/** Bacalhau's times are nanoseconds since the epoch (whole milliseconds in Shoal): an RFC 3339 instant. */
export const nanosToIso = (ns: number): string => new Date(Math.round(ns / 1_000_000)).toISOString();

/** An execution's compute and desired states by their names (the API sends Bacalhau's integers). */
export const computeStateName = (n: number): string => COMPUTE_STATES[n] ?? `state ${n}`;
export const desiredStateName = (n: number): string => DESIRED_STATES[n] ?? `state ${n}`;

/** A job that will not change any more: nothing to stop, no log to follow. */
export const isTerminal = (job: Job): boolean =>
  job.State.StateType === "Completed" || job.State.StateType === "Failed" || job.State.StateType === "Stopped";

/** The job's state in words, not only in colour. */
export function JobStateBadge(props: { readonly job: Job }) {
  const state = props.job.State.StateType;
  return <span class={`badge job-${state.toLowerCase()}`}>{state.toLowerCase()}</span>;
}
