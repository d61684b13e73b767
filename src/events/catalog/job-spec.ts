import { Schema } from "effect";

/**
 * A job's spec as stored in JobSubmitted: machines/job's JobSpec (Bacalhau's models.Job after
 * validation and defaults), test/unit/catalog/job-spec.test.ts holds the two types equal. NEVER
 * tighten this schema: every spec an earlier Shoal stored must stay readable. What a submission
 * may be is machines/job/validate-job-submission.ts's to say, not this schema's.
 */

export const JobType = Schema.Literal("batch", "ops", "daemon", "service");

const Text = Schema.String;
const Texts = Schema.Array(Schema.String);
const TextMap = Schema.Record({ key: Schema.String, value: Schema.String });
const Whole = Schema.Number.pipe(Schema.int());
const NonNegative = Schema.Number.pipe(Schema.int(), Schema.nonNegative());
const Seconds = NonNegative;

export const LabelSelectorRequirement = Schema.Struct({
  Key: Text,
  Operator: Schema.Literal("!", "=", "==", "in", "!=", "notin", "exists", "gt", "lt"),
  Values: Texts,
});

export const DockerEngineParams = Schema.Struct({
  Image: Text,
  Entrypoint: Texts,
  Parameters: Texts,
  EnvironmentVariables: Texts,
  WorkingDirectory: Text,
});

export const EngineSpec = Schema.Struct({ Type: Schema.Literal("docker"), Params: DockerEngineParams });

/** Bacalhau's ResourcesConfig strings (normalized); a field is absent when nothing set it. */
export const ResourcesConfig = Schema.Struct({
  CPU: Schema.optional(Text),
  Memory: Schema.optional(Text),
  Disk: Schema.optional(Text),
  GPU: Schema.optional(Text),
});

export const TimeoutConfig = Schema.Struct({ ExecutionTimeout: Seconds, QueueTimeout: Seconds, TotalTimeout: Seconds });

export const NetworkConfig = Schema.Struct({
  Type: Schema.Literal("Default", "None", "Host", "Full", "HTTP", "Bridge"),
  Domains: Texts,
});

export const TaskSpec = Schema.Struct({
  Name: Text,
  Engine: EngineSpec,
  Env: TextMap,
  Meta: TextMap,
  Resources: ResourcesConfig,
  Network: NetworkConfig,
  Timeouts: TimeoutConfig,
});

export const StoredJobSpec = Schema.Struct({
  Name: Text,
  Namespace: Text,
  Type: JobType,
  Priority: Whole,
  Count: NonNegative,
  Constraints: Schema.Array(LabelSelectorRequirement),
  Labels: TextMap,
  Meta: TextMap,
  Tasks: Schema.Array(TaskSpec).pipe(Schema.minItems(1)),
});
export type StoredJobSpec = typeof StoredJobSpec.Type;
