import type { JobType, ResourcesConfig } from "./job-spec.ts";

/** Seconds; absent or 0 leaves the job's own value (or none). */
export interface TimeoutDefaults {
  readonly ExecutionTimeout?: number;
  readonly QueueTimeout?: number;
  readonly TotalTimeout?: number;
}

/** Bacalhau's JobDefaults.<Type>: what a job of that type gets where it sets nothing. */
export interface JobTypeDefaults {
  readonly Priority: number;
  readonly Task: {
    readonly Resources: ResourcesConfig;
    /**
     * Bacalhau has these for batch and ops only (ExecutionTimeout, TotalTimeout); QueueTimeout is
     * Shoal's `JobDefaults.<Type>.Task.Timeouts.QueueTimeout` (issue 7). Long-running jobs ignore
     * ExecutionTimeout and TotalTimeout.
     */
    readonly Timeouts: TimeoutDefaults;
  };
}

export interface JobDefaults {
  readonly Batch: JobTypeDefaults;
  readonly Ops: JobTypeDefaults;
  readonly Daemon: JobTypeDefaults;
  readonly Service: JobTypeDefaults;
}

const BACALHAU_TYPE_DEFAULTS: JobTypeDefaults = { Priority: 0, Task: { Resources: { CPU: "500m", Memory: "512Mb" }, Timeouts: {} } };

/** Bacalhau v1.7's defaults (pkg/config/defaults.go): 500m CPU and 512Mb memory per task, no timeouts. */
export const BACALHAU_JOB_DEFAULTS: JobDefaults = {
  Batch: BACALHAU_TYPE_DEFAULTS,
  Ops: BACALHAU_TYPE_DEFAULTS,
  Daemon: BACALHAU_TYPE_DEFAULTS,
  Service: BACALHAU_TYPE_DEFAULTS,
};

export function defaultsFor(defaults: JobDefaults, type: JobType): JobTypeDefaults {
  switch (type) {
    case "batch":
      return defaults.Batch;
    case "ops":
      return defaults.Ops;
    case "daemon":
      return defaults.Daemon;
    case "service":
      return defaults.Service;
  }
}
