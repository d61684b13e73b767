import { Schema } from "effect";
import { StoredJobSpec } from "./job-spec.ts";

/** Bacalhau's JobStateType as its JSON writes it (MarshalText). */
export const JobStateName = Schema.Literal("Pending", "Queued", "Running", "Completed", "Failed", "Stopped");
export type JobStateName = typeof JobStateName.Type;

/** States a job can leave: what `Previous` names. */
const Live = Schema.Literal("Pending", "Queued", "Running");

/** A job is accepted: its spec (validated, defaults applied) is stored and it is Pending. */
export const JobSubmitted = Schema.Struct({
  JobID: Schema.String,
  Job: StoredJobSpec,
  /** Bacalhau's per-job spec version: 1 for a new job. */
  Version: Schema.Number.pipe(Schema.int(), Schema.positive()),
  /** What the submission's sanitizing dropped or ignored, as the submitter was told. */
  Warnings: Schema.Array(Schema.String),
  /** The submission's IdempotencyToken, when it had one: a retry with it is answered with this version. */
  IdempotencyToken: Schema.optional(Schema.String),
});

/**
 * No node could take the job (`Reason`: the scheduler's account of why); it waits for one until its QueueTimeout.
 * Recorded again while queued when the number of executions it lacks (`Wanted`) changes, so its reason stays true.
 */
export const JobQueued = Schema.Struct({
  JobID: Schema.String,
  Previous: Live,
  Reason: Schema.String,
  Wanted: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative())),
});

/** An execution of the job is to run: the job is Running. */
export const JobStarted = Schema.Struct({ JobID: Schema.String, Previous: Live });

export const JobCompleted = Schema.Struct({ JobID: Schema.String, Previous: Live });

/**
 * Why a job failed, for the history's topic: the scheduler's verdict (not enough nodes, retries
 * exhausted, executions failed), its QueueTimeout passing while queued, or its TotalTimeout.
 */
export const JobFailureCause = Schema.Literal("Scheduling", "QueueTimeout", "TotalTimeout");
export type JobFailureCause = typeof JobFailureCause.Type;

export const JobFailed = Schema.Struct({
  JobID: Schema.String,
  Previous: Live,
  Cause: JobFailureCause,
  Message: Schema.String,
});

/** A user stopped the job before it completed; `Reason` is theirs (possibly empty). */
export const JobStopped = Schema.Struct({ JobID: Schema.String, Previous: Live, Reason: Schema.String });

const Version = Schema.Number.pipe(Schema.int(), Schema.positive());

/**
 * The job's current `Version` cannot be placed until executions of its earlier versions stop (`Reason`: the
 * scheduler's account of which nodes lack what); those run on and the job keeps its state. Recorded when the reason
 * changes, never again for the same one.
 */
export const JobUpdateHeld = Schema.Struct({ JobID: Schema.String, Previous: Live, Version, Reason: Schema.String });

/** The held `Version` found room: its placement goes on (what follows is as for any placement). */
export const JobUpdateResumed = Schema.Struct({ JobID: Schema.String, Previous: Live, Version });

/**
 * A job of that name was submitted again (Bacalhau's update): `Job` is its new spec, the job's
 * `Version`, and it is Pending again, whatever its state was. `Diff` is what changed (empty only
 * when the submitter forced an unchanged spec through, `Forced`).
 */
export const JobUpdated = Schema.Struct({
  JobID: Schema.String,
  Previous: JobStateName,
  Version,
  Job: StoredJobSpec,
  Diff: Schema.String,
  Forced: Schema.Boolean,
  Warnings: Schema.Array(Schema.String),
  /** The submission's IdempotencyToken, when it had one: a retry with it is answered with this version. */
  IdempotencyToken: Schema.optional(Schema.String),
});

/**
 * A user asked for the job to run again: the spec of its version `FromVersion`, carried as `Job`,
 * becomes its next `Version`, and it is Pending again. `Reason` is theirs, or "job rerun".
 */
export const JobRerun = Schema.Struct({
  JobID: Schema.String,
  Previous: JobStateName,
  Version,
  FromVersion: Version,
  Job: StoredJobSpec,
  Reason: Schema.String,
});

export const JOB_EVENT_SCHEMAS = {
  JobSubmitted,
  JobQueued,
  JobStarted,
  JobCompleted,
  JobFailed,
  JobStopped,
  JobUpdated,
  JobRerun,
  JobUpdateHeld,
  JobUpdateResumed,
} as const;

export type JobEventType = keyof typeof JOB_EVENT_SCHEMAS;
export const JOB_EVENT_TYPES = Object.keys(JOB_EVENT_SCHEMAS) as JobEventType[];

/** A job event as the domain sees it: its type and its data. */
export type JobEvent = {
  [T in JobEventType]: { readonly type: T; readonly data: (typeof JOB_EVENT_SCHEMAS)[T]["Type"] };
}[JobEventType];

export type JobEventOf<T extends JobEventType> = Extract<JobEvent, { type: T }>;
