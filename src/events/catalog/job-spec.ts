import { Schema } from "effect";
import { InputSource } from "./input-source.ts";
import { NETWORK_TYPES } from "./network-types.ts";

/**
 * The one definition of a job's spec: Bacalhau's models.Job (v1.7) after SanitizeSubmission,
 * Normalize and the JobDefaults transformer, without the fields the server owns (ID, State,
 * Version, Revision, CreateTime, ModifyTime: those live in JobState). Field names are Bacalhau's
 * so that the API can serve a stored spec as it is. machines/ takes its types from here
 * (`JobSpec`, `TaskSpec`, …); `SubmittedJob` is what a client may send, and the OpenAPI document's
 * request body. NEVER tighten `StoredJobSpec`: every spec an earlier Shoal stored in JobSubmitted
 * must stay readable. What a submission may be is src/actors/job-submission/'s to say.
 */

export const JobType = Schema.Literal("batch", "ops", "daemon", "service");
export type JobType = typeof JobType.Type;

export const NetworkType = Schema.Literal(...NETWORK_TYPES);
export type NetworkType = typeof NetworkType.Type;

/** Kubernetes' selection.Operator, as Bacalhau's LabelSelectorRequirement carries it. */
export const SelectorOperator = Schema.Literal("!", "=", "==", "in", "!=", "notin", "exists", "gt", "lt");
export type SelectorOperator = typeof SelectorOperator.Type;

const Text = Schema.String;
const Texts = Schema.Array(Schema.String);
const TextMap = Schema.Record({ key: Schema.String, value: Schema.String });
const Whole = Schema.Number.pipe(Schema.int());
const NonNegative = Schema.Number.pipe(Schema.int(), Schema.nonNegative());
const Seconds = NonNegative;

export const LabelSelectorRequirement = Schema.Struct({ Key: Text, Operator: SelectorOperator, Values: Texts });
export type LabelSelectorRequirement = typeof LabelSelectorRequirement.Type;

/** The Docker engine's params (Bacalhau's pkg/executor/docker/models EngineSpec), every field present. */
export const DockerEngineParams = Schema.Struct({
  Image: Text,
  Entrypoint: Texts,
  Parameters: Texts,
  EnvironmentVariables: Texts,
  WorkingDirectory: Text,
});
export type DockerEngineParams = typeof DockerEngineParams.Type;

export const EngineSpec = Schema.Struct({ Type: Schema.Literal("docker"), Params: DockerEngineParams });
export type EngineSpec = typeof EngineSpec.Type;

/**
 * Bacalhau's ResourcesConfig: the strings as submitted (normalized: lower case, no spaces), a
 * field absent when neither the job nor the defaults set it. `parseTaskResources` reads them.
 */
export const ResourcesConfig = Schema.Struct({
  CPU: Schema.optional(Text),
  Memory: Schema.optional(Text),
  Disk: Schema.optional(Text),
  GPU: Schema.optional(Text),
});
export type ResourcesConfig = typeof ResourcesConfig.Type;

/** Seconds; 0 means none (Bacalhau's TimeoutConfig). */
export const TimeoutConfig = Schema.Struct({ ExecutionTimeout: Seconds, QueueTimeout: Seconds, TotalTimeout: Seconds });
export type TimeoutConfig = typeof TimeoutConfig.Type;

export const NetworkConfig = Schema.Struct({ Type: NetworkType, Domains: Texts });
export type NetworkConfig = typeof NetworkConfig.Type;

/**
 * Bacalhau's SpecConfig as a task's Publisher: the type (one of PUBLISHER_TYPES when accepted) and
 * its params. Absent on tasks that publish nothing, and on every spec stored before results.
 */
export const PublisherSpec = Schema.Struct({
  Type: Text,
  Params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
});
export type PublisherSpec = typeof PublisherSpec.Type;

/** Bacalhau's ResultPath: a directory of the container (absolute) published under a name. */
export const ResultPath = Schema.Struct({ Name: Text, Path: Text });
export type ResultPath = typeof ResultPath.Type;

export const TaskSpec = Schema.Struct({
  Name: Text,
  Engine: EngineSpec,
  /** Values are literal, or `env:HOST_VAR` for the compute node to resolve (Bacalhau's EnvVarValue). */
  Env: TextMap,
  Meta: TextMap,
  Resources: ResourcesConfig,
  Network: NetworkConfig,
  Timeouts: TimeoutConfig,
  /** Data mounted into the task's container (absent: none; specs stored before inputs have none). */
  InputSources: Schema.optional(Schema.Array(InputSource)),
  Publisher: Schema.optional(PublisherSpec),
  ResultPaths: Schema.optional(Schema.Array(ResultPath)),
});
export type TaskSpec = typeof TaskSpec.Type;

export const StoredJobSpec = Schema.Struct({
  Name: Text,
  Namespace: Text,
  Type: JobType,
  Priority: Whole,
  /** batch/service: replicas (at least 1); ops/daemon: 0, one per matching node. */
  Count: NonNegative,
  Constraints: Schema.Array(LabelSelectorRequirement),
  Labels: TextMap,
  Meta: TextMap,
  /** Exactly one task: Bacalhau v1.x runs one task per job (validation keeps the first). */
  Tasks: Schema.Array(TaskSpec).pipe(Schema.minItems(1)),
});
export type StoredJobSpec = typeof StoredJobSpec.Type;
export type JobSpec = StoredJobSpec;
