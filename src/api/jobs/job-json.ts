import { Schema } from "effect";
import { computeStateNumber, desiredStateNumber } from "../../../machines/execution/execution-states.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import { StoredJobSpec } from "../../events/catalog/job-spec.ts";
import { PublishedResult, RunOutput } from "../../events/catalog/execution-events.ts";

/** Bacalhau's times are nanoseconds since the epoch; Shoal keeps milliseconds. */
const NS_PER_MS = 1_000_000;
const Int = Schema.Number.pipe(Schema.int());
const TextMap = Schema.Record({ key: Schema.String, value: Schema.String });
/** Nanoseconds since the epoch: whole, but past 2^53, so not a "safe" integer to JavaScript. */
const Nanos = Schema.Number.annotations({ jsonSchema: { type: "integer", format: "int64" } });

const JobStateObject = Schema.Struct({
  StateType: Schema.Literal("Pending", "Queued", "Running", "Completed", "Failed", "Stopped"),
  Message: Schema.String,
});

/** Bacalhau's models.Job: the stored spec plus what the server owns. */
export const JobJson = Schema.Struct({
  ...StoredJobSpec.fields,
  ID: Schema.String,
  State: JobStateObject,
  Version: Int,
  Revision: Int,
  CreateTime: Nanos,
  ModifyTime: Nanos,
}).annotations({ identifier: "Job" });
export type JobJson = typeof JobJson.Type;

const ExecutionStateObject = Schema.Struct({ StateType: Int, Message: Schema.String });
/** Bacalhau's State.Details: here the limits the execution's node runs it under, from its start on. */
const ComputeStateObject = Schema.Struct({ StateType: Int, Message: Schema.String, Details: Schema.optional(TextMap) });
const Resources = Schema.Struct({ CPU: Schema.Number, Memory: Int, Disk: Int, GPU: Int });

/** Bacalhau's models.Execution, states as its integers (v1.6/1.7 numbering). */
export const ExecutionJson = Schema.Struct({
  ID: Schema.String,
  Namespace: Schema.String,
  EvalID: Schema.String,
  Name: Schema.String,
  NodeID: Schema.String,
  JobID: Schema.String,
  JobVersion: Int,
  AllocatedResources: Schema.Struct({ Tasks: Schema.Record({ key: Schema.String, value: Resources }) }),
  DesiredState: ExecutionStateObject,
  ComputeState: ComputeStateObject,
  RunOutput: Schema.optional(RunOutput),
  PublishedResult: Schema.optional(PublishedResult),
  PreviousExecution: Schema.String,
  NextExecution: Schema.String,
  FollowupEvalID: Schema.String,
  PartitionIndex: Int,
  Revision: Int,
  CreateTime: Nanos,
  ModifyTime: Nanos,
}).annotations({ identifier: "Execution" });
export type ExecutionJson = typeof ExecutionJson.Type;

export const JobHistoryJson = Schema.Struct({
  Type: Schema.Literal("JobLevel", "ExecutionLevel"),
  JobID: Schema.String,
  ExecutionID: Schema.optional(Schema.String),
  JobVersion: Int,
  JobState: Schema.optional(Schema.Struct({ Previous: Schema.String, New: Schema.String })),
  ExecutionState: Schema.optional(Schema.Struct({ Previous: Int, New: Int })),
  Event: Schema.Struct({ Topic: Schema.String, Message: Schema.String, Details: TextMap, Timestamp: Schema.String }),
  Time: Schema.String,
  SeqNum: Int,
}).annotations({ identifier: "JobHistory" });

/** A submitted job's view as Bacalhau's models.Job. */
export function jobJson(job: JobState): JobJson {
  const spec = job.spec;
  if (spec === undefined || job.state === undefined)
    throw new Error(`job ${job.jobId} has no view: it was never submitted`);
  return {
    ID: job.jobId,
    Name: spec.Name,
    Namespace: spec.Namespace,
    Type: spec.Type,
    Priority: spec.Priority,
    Count: spec.Count,
    Constraints: spec.Constraints,
    Meta: spec.Meta,
    Labels: spec.Labels,
    Tasks: spec.Tasks,
    State: { StateType: job.state, Message: job.message },
    Version: job.version,
    Revision: job.revision,
    CreateTime: job.createTime * NS_PER_MS,
    ModifyTime: job.modifyTime * NS_PER_MS,
  };
}

/** An execution's view as Bacalhau's models.Execution; `taskName` keys its allocated resources as Bacalhau's do. */
export function executionJson(execution: ExecutionState, taskName: string): ExecutionJson {
  const { computeState, desiredState } = execution;
  if (computeState === undefined || desiredState === undefined)
    throw new Error(`execution ${execution.executionId} has no view: it was never created`);
  return {
    ID: execution.executionId,
    Namespace: execution.namespace,
    EvalID: "",
    Name: execution.executionId,
    NodeID: execution.nodeId,
    JobID: execution.jobId,
    JobVersion: execution.jobVersion,
    AllocatedResources: { Tasks: { [taskName]: execution.allocatedResources } },
    DesiredState: { StateType: desiredStateNumber(desiredState), Message: execution.desiredMessage },
    ComputeState: {
      StateType: computeStateNumber(computeState),
      Message: execution.computeMessage,
      ...(execution.limits === undefined ? {} : { Details: execution.limits }),
    },
    ...(execution.runOutput === undefined ? {} : { RunOutput: execution.runOutput }),
    ...(execution.publishedResult === undefined ? {} : { PublishedResult: execution.publishedResult }),
    PreviousExecution: execution.previousExecution,
    NextExecution: "",
    FollowupEvalID: "",
    PartitionIndex: execution.partitionIndex,
    Revision: execution.revision,
    CreateTime: execution.createTime * NS_PER_MS,
    ModifyTime: execution.modifyTime * NS_PER_MS,
  };
}
