/**
 * A job's spec as Shoal stores it: Bacalhau's models.Job (v1.7) after SanitizeSubmission,
 * Normalize and the JobDefaults transformer, without the fields the server owns (ID, State,
 * Version, Revision, CreateTime, ModifyTime: those live in JobState). Field names are Bacalhau's
 * so that the API can serve a stored spec as it is. The catalog's Effect schema of it
 * (src/events/catalog/job-spec.ts) is held to this type by test/unit/catalog/job-spec.test.ts.
 */

export const JOB_TYPES = ["batch", "ops", "daemon", "service"] as const;
export type JobType = (typeof JOB_TYPES)[number];

/** Long-running jobs never complete on their own and have no execution or total timeout (Bacalhau's IsLongRunning). */
export const isLongRunning = (type: JobType): boolean => type === "service" || type === "daemon";

/** Bacalhau's models.Network, serialized as its text (MarshalText), as Bacalhau's JSON has it. */
export const NETWORK_TYPES = ["Default", "None", "Host", "Full", "HTTP", "Bridge"] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];

/** Kubernetes' selection.Operator, as Bacalhau's LabelSelectorRequirement carries it. */
export const SELECTOR_OPERATORS = ["!", "=", "==", "in", "!=", "notin", "exists", "gt", "lt"] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

export interface LabelSelectorRequirement {
  readonly Key: string;
  readonly Operator: SelectorOperator;
  readonly Values: readonly string[];
}

/** The Docker engine's params (Bacalhau's pkg/executor/docker/models EngineSpec), every field present. */
export interface DockerEngineParams {
  readonly Image: string;
  readonly Entrypoint: readonly string[];
  readonly Parameters: readonly string[];
  readonly EnvironmentVariables: readonly string[];
  readonly WorkingDirectory: string;
}

export interface EngineSpec {
  readonly Type: "docker";
  readonly Params: DockerEngineParams;
}

/**
 * Bacalhau's ResourcesConfig: the strings as submitted (normalized: lower case, no spaces), a
 * field absent when neither the job nor the defaults set it. `parseTaskResources` reads them.
 */
export interface ResourcesConfig {
  readonly CPU?: string;
  readonly Memory?: string;
  readonly Disk?: string;
  readonly GPU?: string;
}

/** Seconds; 0 means none (Bacalhau's TimeoutConfig). */
export interface TimeoutConfig {
  readonly ExecutionTimeout: number;
  readonly QueueTimeout: number;
  readonly TotalTimeout: number;
}

export interface NetworkConfig {
  readonly Type: NetworkType;
  readonly Domains: readonly string[];
}

export interface TaskSpec {
  readonly Name: string;
  readonly Engine: EngineSpec;
  /** Values are literal, or `env:HOST_VAR` for the compute node to resolve (Bacalhau's EnvVarValue). */
  readonly Env: Readonly<Record<string, string>>;
  readonly Meta: Readonly<Record<string, string>>;
  readonly Resources: ResourcesConfig;
  readonly Network: NetworkConfig;
  readonly Timeouts: TimeoutConfig;
}

export interface JobSpec {
  readonly Name: string;
  readonly Namespace: string;
  readonly Type: JobType;
  readonly Priority: number;
  /** batch/service: replicas (at least 1); ops/daemon: 0, one per matching node. */
  readonly Count: number;
  readonly Constraints: readonly LabelSelectorRequirement[];
  readonly Labels: Readonly<Record<string, string>>;
  readonly Meta: Readonly<Record<string, string>>;
  /** Exactly one task: Bacalhau v1.x runs one task per job (validation keeps the first). */
  readonly Tasks: readonly TaskSpec[];
}

/** Bacalhau's DefaultNamespace. */
export const DEFAULT_NAMESPACE = "default";

/** The job's one task (Bacalhau's Job.Task()); a validated spec always has it. */
export function taskOf(spec: JobSpec): TaskSpec {
  const task = spec.Tasks[0];
  if (!task) throw new Error("a job spec without a task: validateJobSubmission never makes one");
  return task;
}
