/**
 * How large a job may be. A job is stored once and then read by every placement, every dispatch
 * and every recovery: one that no node could take, or that the work protocol cannot carry, must be
 * refused at submission, not found out later by a workflow that can never get past it.
 */

/**
 * The most the work protocol carries per field (src/transport/work-messages.ts builds its schema
 * from these). Submission limits may be tighter, never looser: a job the wire cannot carry is
 * refused before it is stored.
 */
export const WIRE_LIMITS = {
  imageLength: 512,
  entrypointItems: 256,
  parameterItems: 1024,
  environmentVariableItems: 256,
  /** Each Entrypoint, Parameters and EnvironmentVariables item, and each Env value. */
  textLength: 8192,
  workingDirectoryLength: 1024,
  /** Env names: an ASCII letter or _, then letters, digits or _, at most this many in all. */
  envNameLength: 128,
} as const;

/** The env names the wire carries; submission asks for upper case on top. */
export const WIRE_ENV_NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${WIRE_LIMITS.envNameLength - 1}}$`);

/** The highest `JobLimits.MaxCount` may be set to: placement and settling read every execution of a job. */
export const MAX_COUNT_CEILING = 100_000;

/** Docker refuses a container memory limit below 6 MiB: a smaller job could never start. */
export const DOCKER_MIN_MEMORY = 6 * 1024 * 1024;

/** `JobLimits.*` from config, as the job's rules take them (CPU in cores, sizes in bytes). */
export interface JobLimits {
  /** Replicas of a batch or service job. */
  readonly MaxCount: number;
  /** Entries of Tasks[0].Env, and items of Params.EnvironmentVariables (each). */
  readonly MaxEnvironmentVariables: number;
  /** Characters of each Env value and each EnvironmentVariables item. */
  readonly MaxEnvValueLength: number;
  readonly MaxEntrypointItems: number;
  readonly MaxParameters: number;
  /** Characters of each Entrypoint and Parameters item. */
  readonly MaxArgumentLength: number;
  readonly MaxImageLength: number;
  readonly MaxWorkingDirectoryLength: number;
  /** Characters of the job's Name and of its task's Name. */
  readonly MaxNameLength: number;
  /** Bytes; a task may ask for no less memory. */
  readonly MinMemory: number;
  /** Cores; no node offers more. */
  readonly MaxCPU: number;
  /** Bytes; no node offers more. */
  readonly MaxMemory: number;
  readonly MaxGPU: number;
}

export const DEFAULT_JOB_LIMITS: JobLimits = {
  MaxCount: 1000,
  MaxEnvironmentVariables: 64,
  MaxEnvValueLength: 4096,
  MaxEntrypointItems: 64,
  MaxParameters: 256,
  MaxArgumentLength: 4096,
  MaxImageLength: WIRE_LIMITS.imageLength,
  MaxWorkingDirectoryLength: WIRE_LIMITS.workingDirectoryLength,
  MaxNameLength: 255,
  MinMemory: DOCKER_MIN_MEMORY,
  MaxCPU: 4096,
  MaxMemory: 64 * 1024 ** 4,
  MaxGPU: 64,
};

/** The config key each limit is set by (the messages that refuse a job name it). */
export const LIMIT_KEYS: { readonly [K in keyof JobLimits]: `JobLimits.${K}` } = {
  MaxCount: "JobLimits.MaxCount",
  MaxEnvironmentVariables: "JobLimits.MaxEnvironmentVariables",
  MaxEnvValueLength: "JobLimits.MaxEnvValueLength",
  MaxEntrypointItems: "JobLimits.MaxEntrypointItems",
  MaxParameters: "JobLimits.MaxParameters",
  MaxArgumentLength: "JobLimits.MaxArgumentLength",
  MaxImageLength: "JobLimits.MaxImageLength",
  MaxWorkingDirectoryLength: "JobLimits.MaxWorkingDirectoryLength",
  MaxNameLength: "JobLimits.MaxNameLength",
  MinMemory: "JobLimits.MinMemory",
  MaxCPU: "JobLimits.MaxCPU",
  MaxMemory: "JobLimits.MaxMemory",
  MaxGPU: "JobLimits.MaxGPU",
};

/** The most each limit may be set to: what the wire carries, or what Shoal can hold. */
const CEILINGS: { readonly [K in keyof JobLimits]?: number } = {
  MaxCount: MAX_COUNT_CEILING,
  MaxEnvironmentVariables: WIRE_LIMITS.environmentVariableItems,
  MaxEnvValueLength: WIRE_LIMITS.textLength,
  MaxEntrypointItems: WIRE_LIMITS.entrypointItems,
  MaxParameters: WIRE_LIMITS.parameterItems,
  MaxArgumentLength: WIRE_LIMITS.textLength,
  MaxImageLength: WIRE_LIMITS.imageLength,
  MaxWorkingDirectoryLength: WIRE_LIMITS.workingDirectoryLength,
  // A name travels in the execution's environment and in log lines; Env values are capped by the wire.
  MaxNameLength: 1024,
};

/** What is wrong with configured limits, each naming its key: start-up refuses them. */
export function jobLimitsProblems(limits: JobLimits): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(LIMIT_KEYS) as (keyof JobLimits)[]) {
    const value = limits[key];
    const ceiling = CEILINGS[key];
    if (!(Number.isFinite(value) && value > 0)) problems.push(`${LIMIT_KEYS[key]}: must be more than 0, got ${value}`);
    else if (ceiling !== undefined && value > ceiling) {
      problems.push(`${LIMIT_KEYS[key]}: ${value} is more than Shoal can carry (at most ${ceiling})`);
    }
  }
  if (limits.MinMemory < DOCKER_MIN_MEMORY) {
    problems.push(`${LIMIT_KEYS.MinMemory}: ${limits.MinMemory} bytes is less than Docker's minimum of 6MiB`);
  }
  if (limits.MinMemory > limits.MaxMemory) problems.push(`${LIMIT_KEYS.MinMemory}: more than ${LIMIT_KEYS.MaxMemory}`);
  return problems;
}
