import { jobDefaultsProblems, type JobDefaults, type JobTypeDefaults } from "../../machines/job/job-defaults.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { StartupError } from "../errors/startup-error.ts";

type TypeName = "Batch" | "Ops" | "Service" | "Daemon";

/**
 * `JobDefaults.<Type>.…` from config as the job's rules take them (timeouts in whole seconds).
 * Bad defaults stop start-up, naming the key: a job relying on one must never be blamed for it.
 */
export function jobDefaultsOf(config: ShoalConfig): JobDefaults {
  const problems: string[] = [];
  const c = config as unknown as Record<string, unknown>;
  const seconds = (key: string): number | undefined => {
    const ms = c[key];
    if (typeof ms !== "number" || ms === 0) return undefined;
    if (ms % 1000 !== 0) problems.push(`${key}: must be whole seconds, got ${ms} ms`);
    return Math.ceil(ms / 1000);
  };
  const of = (type: TypeName): JobTypeDefaults => {
    const at = `JobDefaults.${type}.Task`;
    const timeouts: Record<string, number> = {};
    for (const name of ["QueueTimeout", "ExecutionTimeout", "TotalTimeout"]) {
      const value = seconds(`${at}.Timeouts.${name}`);
      if (value !== undefined) timeouts[name] = value;
    }
    return {
      Priority: c[`JobDefaults.${type}.Priority`] as number,
      Task: {
        Resources: { CPU: String(c[`${at}.Resources.CPU`]), Memory: String(c[`${at}.Resources.Memory`]) },
        Timeouts: timeouts,
      },
    };
  };
  const defaults: JobDefaults = { Batch: of("Batch"), Ops: of("Ops"), Service: of("Service"), Daemon: of("Daemon") };
  problems.push(...jobDefaultsProblems(defaults));
  if (problems.length > 0) throw new StartupError(`invalid job defaults: ${problems.join("; ")}`);
  return defaults;
}
