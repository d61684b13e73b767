import type { JobSpec } from "./job-spec.ts";

/** Bacalhau's reserved Meta prefix: keys its server sets, never part of what a user changed. */
const RESERVED_META = "bacalhau.org/";

type Value = unknown;

const isObject = (v: Value): v is Readonly<Record<string, Value>> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** A path's next step: `Tasks[0]`, `Engine.Params`, `Meta["team/a"]` for a key that is no identifier. */
function step(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  return path === "" ? name : name.startsWith("[") ? `${path}${name}` : `${path}.${name}`;
}

function walk(path: string, before: Value, after: Value, out: string[]): void {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      if ((path === "Meta" || path.endsWith(".Meta")) && key.startsWith(RESERVED_META)) continue;
      walk(step(path, key), before[key], after[key], out);
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) walk(step(path, i), before[i], after[i], out);
    return;
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  if (before !== undefined) out.push(`- ${path}: ${JSON.stringify(before)}`);
  if (after !== undefined) out.push(`+ ${path}: ${JSON.stringify(after)}`);
}

/**
 * What differs between a job's stored spec and a new one, as Bacalhau's Job.CompareWith decides
 * it: every field of the spec (the job's ID, state, version, revision and times are not in it),
 * except Meta keys under `bacalhau.org/` (the job's and its tasks'); resource strings are stored
 * lower case, so their case never counts. One line per changed value, `- Path: old` then
 * `+ Path: new` (a value only one side has gets only its line); "" when nothing differs. Bacalhau
 * prints go-cmp's report, whose format go-cmp itself calls unstable; clients print this text,
 * they do not parse it.
 */
export function jobSpecDiff(before: JobSpec, after: JobSpec): string {
  const out: string[] = [];
  walk("", before, after, out);
  return out.join("\n");
}
