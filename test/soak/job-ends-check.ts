import { categoryOf, entityIdOf } from "../../src/events/streams.ts";
import type { StoreEvent } from "./store-events.ts";

const STATE_OF: Readonly<Record<string, string>> = {
  JobSubmitted: "Pending",
  JobQueued: "Queued",
  JobStarted: "Running",
  JobCompleted: "Completed",
  JobFailed: "Failed",
  JobStopped: "Stopped",
};
const TERMINAL = new Set(["Completed", "Failed", "Stopped"]);
const LONG_RUNNING = new Set(["service", "daemon"]);

export interface StoredJob {
  readonly jobId: string;
  readonly type: string;
  /** `sim` (the virtual nodes' jobs) or `docker` (the agents'), when the store said. */
  readonly runsOn?: string;
  readonly state: string;
}

/** Every job in the store with its type and its state after its last event. */
export function storedJobs(store: readonly StoreEvent[]): StoredJob[] {
  const jobs = new Map<string, { type: string; runsOn?: string; state: string }>();
  for (const e of store) {
    if (categoryOf(e.stream) !== "job") continue;
    const jobId = entityIdOf(e.stream);
    const state = STATE_OF[e.type];
    if (state === undefined) continue;
    const job = jobs.get(jobId) ?? { type: e.jobType ?? "?", ...(e.runsOn ? { runsOn: e.runsOn } : {}), state };
    job.state = state;
    jobs.set(jobId, job);
  }
  return [...jobs].map(([jobId, j]) => ({ jobId, ...j }));
}

export const isTerminal = (job: StoredJob): boolean => TERMINAL.has(job.state);
export const isLongRunning = (job: StoredJob): boolean => LONG_RUNNING.has(job.type);

export interface JobEnds {
  /** `[runsOn ]type state` → how many, e.g. `sim batch Completed` (`batch Completed` when runsOn is unknown). */
  readonly counts: Readonly<Record<string, number>>;
  /** Jobs with no end state (services and daemons included: the soak stopped every one). */
  readonly unended: readonly StoredJob[];
  /** Services and daemons that ended otherwise than Stopped, which is all the soak asked of them. */
  readonly longRunningNotStopped: readonly StoredJob[];
}

export function jobEnds(jobs: readonly StoredJob[]): JobEnds {
  const counts: Record<string, number> = {};
  for (const j of jobs) {
    const key = `${j.runsOn ? `${j.runsOn} ` : ""}${j.type} ${j.state}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return {
    counts,
    unended: jobs.filter((j) => !isTerminal(j)),
    longRunningNotStopped: jobs.filter((j) => isLongRunning(j) && isTerminal(j) && j.state !== "Stopped"),
  };
}
