import { Schema } from "effect";
import { WIRE_ENV_NAME, WIRE_LIMITS } from "../../machines/job/job-limits.ts";
import { INPUT_SOURCE_LIMITS } from "../events/catalog/input-source.ts";
import { NodeId } from "../events/catalog/node-info.ts";
import { PUBLISHER_TYPES } from "../events/catalog/publisher-types.ts";
import { MAX_RESULT_NAME_LENGTH, MAX_RESULT_PATH_LENGTH, MAX_RESULT_PATHS } from "../events/catalog/submitted-job.ts";

/**
 * The work protocol (docs/protocol.md, Work): Bacalhau's NCL v1 messages between the
 * orchestrator and one compute node. The orchestrator publishes work on the node's own
 * `shoal.work.<id>.execution`; the node reports on its own `shoal.compute.<id>.execution` as a
 * request, answered like every other call, and sends a report again until it is answered.
 */
/**
 * The most of each stream a report carries (UTF-16 units, so at most 24 KiB of UTF-8 each, and a
 * whole report stays under the 64 KiB message limit). Bacalhau returns 2 KiB
 * (MaxStdoutReturnLength); the rest stays readable through the logs.
 */
export const MAX_REPORTED_OUTPUT = 8192;
export const MAX_REPORTED_REASON = 1024;

const MessageID = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128));
/** `e-<uuid>` / `j-<uuid>` as the host makes them; any token that is safe in a container name and label. */
const EntityId = (prefix: string) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^${prefix}-[A-Za-z0-9_-]{1,96}$`), {
      message: () => `must be ${prefix}-<id> (letters, digits, _ and -, at most 96 after ${prefix}-)`,
    }),
  );
export const ExecutionID = EntityId("e");
export const JobID = EntityId("j");
const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max));
const Strings = (maxItems: number, max: number) => Schema.Array(Text(max)).pipe(Schema.maxItems(maxItems));
const PositiveInt = Schema.Number.pipe(Schema.int(), Schema.positive());

const W = WIRE_LIMITS;

/**
 * The docker engine's parameters, as Bacalhau's `Tasks[0].Engine.Params`. The caps are the job
 * spec's (machines/job/job-limits.ts): a job that passed submission always fits.
 */
export const DockerEngine = Schema.Struct({
  Type: Schema.Literal("docker"),
  Image: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(W.imageLength)),
  Entrypoint: Schema.optional(Strings(W.entrypointItems, W.textLength)),
  Parameters: Schema.optional(Strings(W.parameterItems, W.textLength)),
  EnvironmentVariables: Schema.optional(Strings(W.environmentVariableItems, W.textLength)),
  WorkingDirectory: Schema.optional(Text(W.workingDirectoryLength)),
});

const Path = Text(INPUT_SOURCE_LIMITS.pathLength);

/** A task's input source, its params in their one form (the job spec's InputSources); the node checks the paths. */
export const WorkInput = Schema.Union(
  Schema.Struct({ Type: Schema.Literal("localDirectory"), SourcePath: Path, ReadWrite: Schema.Boolean, Target: Path }),
  Schema.Struct({ Type: Schema.Literal("urlDownload"), URL: Text(INPUT_SOURCE_LIMITS.urlLength), Target: Path }),
);
export type WorkInput = typeof WorkInput.Type;

/** What the node runs: the task as the job spec stored it, with resources in whole units (millicores, bytes). */
export const WorkTask = Schema.Struct({
  Engine: DockerEngine,
  Env: Schema.optional(
    Schema.Record({ key: Schema.String.pipe(Schema.pattern(WIRE_ENV_NAME)), value: Text(W.textLength) }),
  ),
  Resources: Schema.Struct({ CPUMillis: PositiveInt, MemoryBytes: PositiveInt }),
  /** Bacalhau's network types the executor knows; the node refuses what it does not allow. */
  Network: Schema.Literal("None", "Host", "Full", "HTTP"),
  /** Seconds; 0: none. */
  ExecutionTimeout: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  /** Absent: none (and nodes before inputs never receive any: placement needs their StorageSources). */
  InputSources: Schema.optional(Schema.Array(WorkInput).pipe(Schema.maxItems(INPUT_SOURCE_LIMITS.items))),
  /** The publisher of its results (nodes before results advertise no Publishers: placement sends them none). */
  Publisher: Schema.optional(Schema.Struct({ Type: Schema.Literal(...PUBLISHER_TYPES) })),
  ResultPaths: Schema.optional(
    Schema.Array(
      Schema.Struct({
        Name: Schema.String.pipe(Schema.pattern(/^[^/\\]+$/), Schema.maxLength(MAX_RESULT_NAME_LENGTH)),
        Path: Schema.String.pipe(Schema.pattern(/^\//), Schema.maxLength(MAX_RESULT_PATH_LENGTH)),
      }),
    ).pipe(Schema.maxItems(MAX_RESULT_PATHS)),
  ),
});
export type WorkTask = typeof WorkTask.Type;

const executionWork = <T extends string>(type: T) =>
  Schema.Struct({ Type: Schema.Literal(type), MessageID, NodeID: NodeId, ExecutionID, JobID, Task: WorkTask });

/** Would the node take this execution now? It answers BidAccepted or BidRejected and runs nothing. */
export const AskForBid = executionWork("AskForBid");
/** Run it: the node answers BidRejected (does not fit), or BidAccepted, ExecutionStarted and its end. */
export const RunExecution = executionWork("RunExecution");
/** Stop it: the node answers ExecutionFailed (cancelled) once its container is gone. */
export const CancelExecution = Schema.Struct({
  Type: Schema.Literal("CancelExecution"),
  MessageID,
  NodeID: NodeId,
  ExecutionID,
  Reason: Text(MAX_REPORTED_REASON),
});

export const WorkMessage = Schema.Union(AskForBid, RunExecution, CancelExecution);
export type WorkMessage = typeof WorkMessage.Type;
export type AskForBid = typeof AskForBid.Type;
export type RunExecution = typeof RunExecution.Type;
export type CancelExecution = typeof CancelExecution.Type;

/** Bacalhau's RunCommandResult as reported: each stream cut to MAX_REPORTED_OUTPUT, the cut said by its flag. */
export const RunOutput = Schema.Struct({
  STDOUT: Text(MAX_REPORTED_OUTPUT),
  StdoutTruncated: Schema.Boolean,
  STDERR: Text(MAX_REPORTED_OUTPUT),
  StderrTruncated: Schema.Boolean,
  ExitCode: Schema.Number.pipe(Schema.int()),
  ErrorMsg: Text(MAX_REPORTED_REASON),
});
export type RunOutput = typeof RunOutput.Type;

const report = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ Type: Schema.Literal(type), MessageID, NodeID: NodeId, ExecutionID, ...fields });

const Reason = Text(MAX_REPORTED_REASON);
/** One of Shoal's error kinds: why the node refused or failed it. */
const Code = Text(32);

/**
 * The limits a node's engine runs an execution under (`HostConfig.PidsLimit` → `1024`, …): a few
 * short strings, bounded so that a report stays small.
 */
export const ContainerDetails = Schema.Record({ key: Text(64), value: Text(256) }).pipe(
  Schema.filter((d) => Object.keys(d).length <= 32 || "must hold at most 32 entries"),
);

export const BidAccepted = report("BidAccepted", {});
/**
 * `Answers`: the message refused (nodes before it say nothing). An ask refused after the run was
 * approved is a stale answer (the run is checked on its own); a refused run ends the execution.
 */
export const BidRejected = report("BidRejected", {
  Reason,
  Code,
  Answers: Schema.optional(Schema.Literal("AskForBid", "RunExecution")),
});
/** `Details`: the limits its container runs under (nodes before it say nothing). */
export const ExecutionStarted = report("ExecutionStarted", { Details: Schema.optional(ContainerDetails) });
/** Bacalhau's SpecConfig as a published result: the publisher's type and where it put the result. */
export const PublishedResult = Schema.Struct({
  Type: Text(32),
  Params: Schema.Record({ key: Text(64), value: Schema.Union(Text(1024), Schema.Number) }).pipe(
    Schema.filter((p) => Object.keys(p).length <= 16 || "must hold at most 16 entries"),
  ),
});
export type PublishedResult = typeof PublishedResult.Type;
/** `PublishedResult`: where its results are, when its task has a publisher (nodes before results say nothing). */
export const ExecutionCompleted = report("ExecutionCompleted", {
  RunOutput,
  PublishedResult: Schema.optional(PublishedResult),
});
/** `Cause`: the executor's end reason (exited, timeout, oom-killed, cancelled, image-missing, …, lost). */
export const ExecutionFailed = report("ExecutionFailed", {
  Reason,
  Cause: Text(32),
  RunOutput: Schema.optional(RunOutput),
});

export const ExecutionReport = Schema.Union(
  BidAccepted,
  BidRejected,
  ExecutionStarted,
  ExecutionCompleted,
  ExecutionFailed,
);
export type ExecutionReport = typeof ExecutionReport.Type;
export type ExecutionReportType = ExecutionReport["Type"];
export type BidAccepted = typeof BidAccepted.Type;
export type BidRejected = typeof BidRejected.Type;
export type ExecutionStarted = typeof ExecutionStarted.Type;
export type ExecutionCompleted = typeof ExecutionCompleted.Type;
export type ExecutionFailed = typeof ExecutionFailed.Type;
