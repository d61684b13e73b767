import type { Deadline } from "../decider.ts";
import type { JobCommand } from "./job-commands.ts";
import { isLongRunning, taskOf } from "./job-spec.ts";
import { isTerminalJobState, type JobState } from "./job-state.ts";

/**
 * When a job that cannot be placed stops waiting: QueueTimeout after its current version began (its
 * creation until it is updated or rerun), not after it was queued, as Bacalhau counts it. Bacalhau
 * counts from the creation even for a later version, which fails at once a rerun of a job older
 * than its timeouts; Shoal gives each version its own. With QueueTimeout 0 that is the version's
 * start: the job never queues. Infinity for a job not yet submitted.
 */
export function queueDeadline(state: JobState): number {
  if (!state.spec) return Number.POSITIVE_INFINITY;
  return state.versionTime + taskOf(state.spec).Timeouts.QueueTimeout * 1000;
}

/** When a batch or ops job's current version has run out of time (its start + TotalTimeout); undefined without one. */
export function totalDeadline(state: JobState): number | undefined {
  if (!state.spec || isLongRunning(state.spec.Type)) return undefined;
  const total = taskOf(state.spec).Timeouts.TotalTimeout;
  return total > 0 ? state.versionTime + total * 1000 : undefined;
}

/**
 * The instants at which the job wants a command of its own: its QueueTimeout while it is Queued,
 * its TotalTimeout while it is not terminal. The host's deadline scheduler arms them.
 */
export function jobDeadlines(state: JobState): readonly Deadline<JobCommand>[] {
  if (state.state === undefined || isTerminalJobState(state.state)) return [];
  const out: Deadline<JobCommand>[] = [];
  if (state.state === "Queued")
    out.push({ name: "queue-timeout", at: queueDeadline(state), command: { type: "TimeOutQueue" } });
  const total = totalDeadline(state);
  if (total !== undefined) out.push({ name: "total-timeout", at: total, command: { type: "TimeOutJob" } });
  return out;
}
