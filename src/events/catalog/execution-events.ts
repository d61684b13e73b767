import { Schema } from "effect";
import { JobType } from "./job-spec.ts";

/**
 * Bacalhau's ExecutionStateType names (v1.6/1.7 numbering: the index in
 * machines/execution/execution-states.ts's COMPUTE_STATES is the integer the API serializes).
 */
export const ComputeStateName = Schema.Literal(
  "New",
  "AskForBid",
  "AskForBidAccepted",
  "AskForBidRejected",
  "BidAccepted",
  "Running",
  "Publishing",
  "BidRejected",
  "Completed",
  "Failed",
  "Cancelled",
);
export type ComputeStateName = typeof ComputeStateName.Type;

const Whole = Schema.Number.pipe(Schema.int(), Schema.nonNegative());
const Amount = Schema.Number.pipe(Schema.finite(), Schema.nonNegative());

/** What the scheduler set aside on the node for this execution (Bacalhau's models.Resources units). */
export const AllocatedResources = Schema.Struct({ CPU: Amount, Memory: Whole, Disk: Whole, GPU: Whole });

/** Bacalhau's RunCommandResult, field names and all (`stderr` is lower case in Bacalhau's JSON). */
export const RunOutput = Schema.Struct({
  Stdout: Schema.String,
  StdoutTruncated: Schema.Boolean,
  stderr: Schema.String,
  StderrTruncated: Schema.Boolean,
  ExitCode: Schema.Number.pipe(Schema.int()),
  ErrorMsg: Schema.String,
});
export type RunOutput = typeof RunOutput.Type;

/** The scheduler placed an execution of a job on a node: compute state New. */
export const ExecutionCreated = Schema.Struct({
  ExecutionID: Schema.String,
  JobID: Schema.String,
  Namespace: Schema.String,
  NodeID: Schema.String,
  JobType,
  JobVersion: Whole,
  PartitionIndex: Whole,
  /** Pending: the node is asked for a bid the orchestrator approves (batch, service); Running: direct (ops, daemon). */
  DesiredState: Schema.Literal("Pending", "Running"),
  AllocatedResources,
  /** Seconds the execution may run once it is executing; 0 for none (long-running jobs). */
  ExecutionTimeout: Whole,
  /**
   * Seconds the orchestrator waits past ExecutionTimeout before it fails the execution itself (the node enforces the
   * timeout first).
   */
  TimeoutBuffer: Whole,
  /** The execution this one replaces (a retry), or "". */
  PreviousExecution: Schema.String,
  /**
   * Milliseconds the orchestrator waits for the node to answer the work it is sent (its bid, its
   * start) before the execution ends unanswered. Absent in events stored before it was added: 5 minutes.
   */
  AnswerTimeoutMs: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive())),
});

/** The orchestrator asked the node for a bid (AskForBid). */
export const ExecutionBidAsked = Schema.Struct({ ExecutionID: Schema.String, NodeID: Schema.String });

/** The node will run it: AskForBidAccepted awaiting approval, or BidAccepted for a direct (desired Running) one. */
export const ExecutionBidAccepted = Schema.Struct({
  ExecutionID: Schema.String,
  NodeID: Schema.String,
  /**
   * A direct bid (ops, daemon: already desired Running), which no approval follows. Absent in events stored before it
   * was added: an asked bid.
   */
  Direct: Schema.optional(Schema.Boolean),
});

/** The node declined: AskForBidRejected, desired Stopped. */
export const ExecutionBidDeclined = Schema.Struct({
  ExecutionID: Schema.String,
  NodeID: Schema.String,
  Reason: Schema.String,
});

/** The orchestrator approved the node's bid: desired Running, BidAccepted. */
export const ExecutionApproved = Schema.Struct({ ExecutionID: Schema.String });

/**
 * The orchestrator turned the bid down (more executions than needed, or the node went away): BidRejected, desired
 * Stopped.
 */
export const ExecutionRejected = Schema.Struct({ ExecutionID: Schema.String, Reason: Schema.String });

/**
 * The node started it: Running. `Details`: the limits its node's engine runs it under
 * (`HostConfig.PidsLimit` → `1024`, …); absent in events of nodes that did not say, and in
 * events stored before it was added.
 */
export const ExecutionStarted = Schema.Struct({
  ExecutionID: Schema.String,
  Details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
});

/** The node finished it: Completed, desired Stopped. */
/**
 * Bacalhau's SpecConfig as an execution's PublishedResult: where its node's publisher put its
 * results (the local publisher: Name, Bytes and SHA256 of `<executionId>.tar.gz` on the node).
 */
export const PublishedResult = Schema.Struct({
  Type: Schema.String,
  Params: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number) }),
});
export type PublishedResult = typeof PublishedResult.Type;

/** `PublishedResult`: absent when its task has no publisher, and on every event stored before results. */
export const ExecutionCompleted = Schema.Struct({
  ExecutionID: Schema.String,
  RunOutput,
  PublishedResult: Schema.optional(PublishedResult),
});

/**
 * Why an execution failed: the node reported an error, its ExecutionTimeout passed, the
 * orchestrator failed it (its node is gone, say), a long-running one completed, or its node never
 * answered the work it was sent (its AnswerTimeoutMs passed).
 */
export const ExecutionFailureCause = Schema.Literal(
  "Node",
  "ExecutionTimeout",
  "Orchestrator",
  "CompletedUnexpectedly",
  "Unanswered",
);
export type ExecutionFailureCause = typeof ExecutionFailureCause.Type;

export const ExecutionFailed = Schema.Struct({
  ExecutionID: Schema.String,
  Previous: ComputeStateName,
  Cause: ExecutionFailureCause,
  Message: Schema.String,
  RunOutput: Schema.optional(RunOutput),
});

/**
 * The orchestrator stopped it (the job was stopped or failed, or it is no longer needed): Cancelled, desired Stopped.
 */
export const ExecutionCancelled = Schema.Struct({
  ExecutionID: Schema.String,
  Previous: ComputeStateName,
  Reason: Schema.String,
});

/**
 * What a cancelled execution printed, kept from its node's late report of its end (the node stops its
 * container once told, and reports after the cancel is recorded): Cancelled still, with this RunOutput.
 */
export const ExecutionOutputKept = Schema.Struct({ ExecutionID: Schema.String, RunOutput });

export const EXECUTION_EVENT_SCHEMAS = {
  ExecutionCreated,
  ExecutionBidAsked,
  ExecutionBidAccepted,
  ExecutionBidDeclined,
  ExecutionApproved,
  ExecutionRejected,
  ExecutionStarted,
  ExecutionCompleted,
  ExecutionFailed,
  ExecutionCancelled,
  ExecutionOutputKept,
} as const;

export type ExecutionEventType = keyof typeof EXECUTION_EVENT_SCHEMAS;
export const EXECUTION_EVENT_TYPES = Object.keys(EXECUTION_EVENT_SCHEMAS) as ExecutionEventType[];

export type ExecutionEvent = {
  [T in ExecutionEventType]: { readonly type: T; readonly data: (typeof EXECUTION_EVENT_SCHEMAS)[T]["Type"] };
}[ExecutionEventType];

export type ExecutionEventOf<T extends ExecutionEventType> = Extract<ExecutionEvent, { type: T }>;
