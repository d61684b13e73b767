import { goDuration } from "./go-duration.ts";
import { LIMIT_KEYS, type JobLimits } from "./job-limits.ts";
import { isLongRunning, type JobType, type ResourcesConfig, type TimeoutConfig } from "./job-spec.ts";
import { quote, type Findings } from "./spec-fields.ts";
import { parseTaskResources } from "./task-resources.ts";

/** C0 and C1 control characters, and the line and paragraph separators: nothing a name or path means. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/** "the limit is 64 (JobLimits.MaxEntrypointItems)": every refusal names the key that sets it. */
const limitText = (limits: JobLimits, key: keyof JobLimits, shown: string = String(limits[key])): string =>
  `the limit is ${shown} (${LIMIT_KEYS[key]})`;

/** A string's length against its limit; false when over it. */
export function checkLength(
  text: string,
  path: string,
  what: string,
  key: keyof JobLimits,
  limits: JobLimits,
  f: Findings,
): boolean {
  if (text.length <= limits[key]) return true;
  f.problem(path, `${what} is ${text.length} characters; ${limitText(limits, key)}`);
  return false;
}

/** A name that is set (a job's, a task's): within its length, and no character that makes it mean something else. */
export function checkName(name: string | undefined, path: string, what: string, limits: JobLimits, f: Findings): void {
  if (name === undefined || !checkLength(name, path, what, "MaxNameLength", limits, f)) return;
  if (CONTROL.test(name)) f.problem(path, `${what} ${quote(name)} cannot contain control characters`);
  else if (name.includes("/")) f.problem(path, `${what} ${quote(name)} cannot contain "/"`);
  else if (name.includes("..")) f.problem(path, `${what} ${quote(name)} cannot contain ".."`);
}

/** A list's length and each item's, each against its limit. */
export function checkList(
  items: readonly string[],
  path: string,
  max: { readonly items: keyof JobLimits; readonly length: keyof JobLimits },
  limits: JobLimits,
  f: Findings,
): void {
  if (items.length > limits[max.items]) f.problem(path, `${items.length} items; ${limitText(limits, max.items)}`);
  items.forEach((item, i) => checkLength(item, `${path}[${i}]`, "the item", max.length, limits, f));
}

/** An absolute path inside the container: no `..` segment, no control characters. */
export function checkWorkingDirectory(dir: string, path: string, limits: JobLimits, f: Findings): void {
  if (dir === "" || !checkLength(dir, path, "the working directory", "MaxWorkingDirectoryLength", limits, f)) return;
  if (!dir.startsWith("/")) f.problem(path, `${quote(dir)} must be an absolute path`);
  else if (CONTROL.test(dir)) f.problem(path, `${quote(dir)} cannot contain control characters`);
  else if (dir.split("/").includes("..")) f.problem(path, `${quote(dir)} cannot contain a ".." segment`);
}

/** An image reference: within its length, and no white space or control characters (Docker's grammar has none). */
export function checkImage(image: string | undefined, path: string, limits: JobLimits, f: Findings): void {
  if (image === undefined || !checkLength(image, path, "the image reference", "MaxImageLength", limits, f)) return;
  if (/\s/u.test(image) || CONTROL.test(image)) {
    f.problem(path, `image ${quote(image)} cannot contain white space or control characters`);
  }
}

/** Bytes as a person reads them: in the largest binary unit that divides them exactly. */
function sizeOf(bytes: number): string {
  for (const [unit, size] of [
    ["Ti", 1024 ** 4],
    ["Gi", 1024 ** 3],
    ["Mi", 1024 ** 2],
    ["Ki", 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes} bytes`;
}

const NO_NODE = "is more than any node offers";

/**
 * What a task asks for, once the defaults are in: more than nothing (a container needs some CPU,
 * and Docker refuses less memory than its minimum), and no more than any node could offer.
 */
export function checkResources(resources: ResourcesConfig, path: string, limits: JobLimits, f: Findings): void {
  const r = parseTaskResources(resources);
  const { CPU, Memory } = resources;
  if (CPU !== undefined && CPU !== "") {
    if (r.CPU < 0.001) f.problem(`${path}.CPU`, `CPU ${quote(CPU)} must be at least 1m (one millicore)`);
    else if (r.CPU > limits.MaxCPU) {
      const most = limitText(limits, "MaxCPU", `${limits.MaxCPU} cores`);
      f.problem(`${path}.CPU`, `CPU ${quote(CPU)} ${NO_NODE}: ${most}`);
    }
  }
  if (Memory !== undefined && Memory !== "") {
    const at = `${path}.Memory`;
    if (r.Memory < limits.MinMemory) {
      const least = limitText(limits, "MinMemory", sizeOf(limits.MinMemory));
      f.problem(at, `memory ${quote(Memory)} is less than the minimum: ${least}`);
    } else if (r.Memory > limits.MaxMemory) {
      f.problem(at, `memory ${quote(Memory)} ${NO_NODE}: ${limitText(limits, "MaxMemory", sizeOf(limits.MaxMemory))}`);
    }
  }
  if (r.GPU > limits.MaxGPU) f.problem(`${path}.GPU`, `${r.GPU} GPUs ${NO_NODE}: ${limitText(limits, "MaxGPU")}`);
}

/** Bacalhau's TimeoutConfig.Validate, run once the defaults are in. */
export function checkTimeouts(type: JobType, t: TimeoutConfig, f: Findings): void {
  if (t.TotalTimeout > 0 && t.ExecutionTimeout + t.QueueTimeout > t.TotalTimeout) {
    f.problem(
      "Tasks[0].Timeouts",
      `execution timeout ${goDuration(t.ExecutionTimeout)} and queue timeout ${goDuration(t.QueueTimeout)} should be less than total timeout ${goDuration(t.TotalTimeout)}`,
    );
  }
  if (isLongRunning(type)) {
    for (const key of ["ExecutionTimeout", "TotalTimeout"] as const) {
      if (t[key] > 0) f.warnings.push(`Tasks[0].Timeouts.${key} is ignored: ${type} jobs run until stopped`);
    }
  }
}
