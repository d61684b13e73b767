import {
  isLongRunning,
  taskOf,
  type JobSpec,
  type JobType,
  type ResourcesConfig,
  type TimeoutConfig,
} from "./job-spec.ts";
import { RESOURCE_FORMS, RESOURCE_PARSERS, normalizeResourceString } from "./task-resources.ts";

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

const BACALHAU_TYPE_DEFAULTS: JobTypeDefaults = {
  Priority: 0,
  Task: { Resources: { CPU: "500m", Memory: "512Mb" }, Timeouts: {} },
};

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

/**
 * What is wrong with configured defaults (`JobDefaults.Batch.Task.Resources.CPU: …`), for the
 * config loader to refuse at start: a bad default must never be blamed on a job that relies on it.
 */
export function jobDefaultsProblems(defaults: JobDefaults): string[] {
  const problems: string[] = [];
  for (const [name, d] of Object.entries(defaults) as [string, JobTypeDefaults][]) {
    const at = `JobDefaults.${name}`;
    if (!Number.isSafeInteger(d.Priority)) problems.push(`${at}.Priority: must be a whole number`);
    for (const key of ["CPU", "Memory", "Disk", "GPU"] as const) {
      const text = d.Task.Resources[key];
      if (text !== undefined && text !== "" && RESOURCE_PARSERS[key](text) === undefined)
        problems.push(`${at}.Task.Resources.${key}: ${JSON.stringify(text)} is not ${RESOURCE_FORMS[key]}`);
    }
    for (const key of ["ExecutionTimeout", "QueueTimeout", "TotalTimeout"] as const) {
      const seconds = d.Task.Timeouts[key];
      if (seconds !== undefined && !(Number.isSafeInteger(seconds) && seconds >= 0))
        problems.push(`${at}.Task.Timeouts.${key}: must be a whole number of seconds, at least 0`);
    }
    const t = d.Task.Timeouts;
    if ((t.TotalTimeout ?? 0) > 0 && (t.ExecutionTimeout ?? 0) + (t.QueueTimeout ?? 0) > (t.TotalTimeout ?? 0)) {
      problems.push(`${at}.Task.Timeouts: ExecutionTimeout and QueueTimeout together exceed TotalTimeout`);
    }
  }
  return problems;
}

/** Bacalhau's DefaultsApplier: what the job leaves unset, its type's defaults set. */
export function applyJobDefaults(spec: JobSpec, defaults: JobDefaults): JobSpec {
  const d = defaultsFor(defaults, spec.Type);
  const t = taskOf(spec);
  const r = t.Resources;
  const resources: ResourcesConfig = Object.fromEntries(
    (["CPU", "Memory", "Disk", "GPU"] as const)
      .map(
        (k) =>
          [
            k,
            r[k] !== undefined && r[k] !== ""
              ? r[k]
              : d.Task.Resources[k] === undefined
                ? undefined
                : normalizeResourceString(d.Task.Resources[k] as string),
          ] as const,
      )
      .filter(([, v]) => v !== undefined && v !== ""),
  );
  const dt = d.Task.Timeouts;
  // Bacalhau sets no timeout defaults for long-running jobs: they run until stopped.
  const batchLike = !isLongRunning(spec.Type);
  const timeouts: TimeoutConfig = {
    ExecutionTimeout:
      t.Timeouts.ExecutionTimeout > 0 || !batchLike ? t.Timeouts.ExecutionTimeout : (dt.ExecutionTimeout ?? 0),
    QueueTimeout:
      t.Timeouts.QueueTimeout > 0 || spec.Type === "daemon" ? t.Timeouts.QueueTimeout : (dt.QueueTimeout ?? 0),
    TotalTimeout: t.Timeouts.TotalTimeout > 0 || !batchLike ? t.Timeouts.TotalTimeout : (dt.TotalTimeout ?? 0),
  };
  return {
    ...spec,
    Priority: spec.Priority !== 0 ? spec.Priority : d.Priority,
    Tasks: [{ ...t, Resources: resources, Timeouts: timeouts }],
  };
}
