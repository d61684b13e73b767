import type { JobSpec, JobType, TaskSpec } from "../../src/events/catalog/job-spec.ts";

/**
 * A job's spec as Shoal stores it. Its one definition is the catalog's schema
 * (src/events/catalog/job-spec.ts); machines take only its types.
 */
export type {
  DockerEngineParams,
  EngineSpec,
  JobSpec,
  JobType,
  LabelSelectorRequirement,
  NetworkConfig,
  NetworkType,
  ResourcesConfig,
  SelectorOperator,
  TaskSpec,
  TimeoutConfig,
} from "../../src/events/catalog/job-spec.ts";

/** Long-running jobs never complete on their own and have no execution or total timeout (Bacalhau's IsLongRunning). */
export const isLongRunning = (type: JobType): boolean => type === "service" || type === "daemon";

/** Bacalhau's DefaultNamespace. */
export const DEFAULT_NAMESPACE = "default";

/** The job's one task (Bacalhau's Job.Task()); a validated spec always has it. */
export function taskOf(spec: JobSpec): TaskSpec {
  const task = spec.Tasks[0];
  if (!task) throw new Error("a job spec without a task: validateJobSubmission never makes one");
  return task;
}
