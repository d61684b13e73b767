import type { JobStateName } from "../../src/events/catalog/job-events.ts";
import type { JobSpec } from "./job-spec.ts";

export type { JobStateName };

/** Bacalhau's JobStateType integers (Undefined is 0), for clients that want the number. */
export const JOB_STATE_NUMBERS: Readonly<Record<JobStateName, number>> = {
  Pending: 1,
  Queued: 2,
  Running: 3,
  Completed: 4,
  Failed: 5,
  Stopped: 6,
};

export const isTerminalJobState = (s: JobStateName): boolean => s === "Completed" || s === "Failed" || s === "Stopped";

/**
 * The shape of JobState below. Bump it whenever it or evolveJob changes, so that a snapshot
 * written under another version is ignored and the stream replayed.
 */
export const JOB_STATE_VERSION = 4;

/**
 * A version of a job as it stood when the next one replaced it (Bacalhau's job store keeps each
 * version's models.Job so): its spec, and its state, message, revision and modify time then.
 */
export interface JobVersionRecord {
  readonly version: number;
  readonly spec: JobSpec;
  readonly state: JobStateName;
  readonly message: string;
  readonly revision: number;
  readonly modifyTime: number;
  readonly warnings: readonly string[];
}

/**
 * One job as its stored events describe it: what the actor decides on and what the read model
 * serves as Bacalhau's models.Job (the spec's fields plus ID, State, Version, Revision, times).
 */
export interface JobState {
  readonly jobId: string;
  /** Undefined until JobSubmitted. */
  readonly spec: JobSpec | undefined;
  readonly state: JobStateName | undefined;
  /** Bacalhau's State.Message: the queue reason, the failure, the stop reason; "" otherwise. */
  readonly message: string;
  /** The scheduler's last reason for queueing, kept so that a QueueTimeout fails the job with it. */
  readonly queueReason: string;
  /** How many executions the job lacked when last queued (absent: not said, or queued before it was recorded). */
  readonly queueWanted?: number;
  /** Why the current version waits for room while its earlier versions' executions run on; "" when it does not. */
  readonly heldReason: string;
  /** Per-job spec version (1 once submitted). */
  readonly version: number;
  /** Bacalhau's Revision: 1 at submission, +1 per state change. */
  readonly revision: number;
  /** Milliseconds since the epoch (Bacalhau's CreateTime/ModifyTime are these × 10⁶ ns). */
  readonly createTime: number;
  readonly modifyTime: number;
  /** When the current version began (its submission, update or rerun): what its timeouts count from. */
  readonly versionTime: number;
  readonly warnings: readonly string[];
  /** The versions before the current one, oldest first (empty until the job is updated or rerun). */
  readonly versions: readonly JobVersionRecord[];
  /** The version each IdempotencyToken's submission made (absent until one came with a token). */
  readonly tokens?: Readonly<Record<string, number>>;
}

export function initialJobState(jobId: string): JobState {
  return {
    jobId,
    spec: undefined,
    state: undefined,
    message: "",
    queueReason: "",
    heldReason: "",
    version: 0,
    revision: 0,
    createTime: 0,
    modifyTime: 0,
    versionTime: 0,
    warnings: [],
    versions: [],
  };
}
