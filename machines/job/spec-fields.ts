/**
 * Reading a submitted job (decoded JSON or YAML, unknown shape) field by field, as Bacalhau's Go
 * decoder would, while collecting every problem rather than stopping at the first.
 */

/** One thing wrong with a submitted job: where (Bacalhau's field path, e.g. `Tasks[0].Resources.CPU`) and what. */
export interface SpecProblem {
  readonly path: string;
  readonly message: string;
}

export const problemText = (p: SpecProblem): string => (p.path === "" ? p.message : `${p.path}: ${p.message}`);

export type Obj = Readonly<Record<string, unknown>>;

export const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const isAbsent = (v: unknown): boolean => v === undefined || v === null;
/** Quoted for a message: long input cut (it comes from the submitter). */
export const quote = (s: string): string => JSON.stringify(s.length > 70 ? `${s.slice(0, 64)}…` : s);

/**
 * A field as Go's encoding/json finds it, which Bacalhau's API and CLI decode jobs with: the exact
 * name first, else one that differs only in case (`type: batch` is `Type`).
 */
export function field(obj: Obj, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === lower) return obj[key];
  return undefined;
}

/** Collects problems and warnings while the walk goes on: every problem is named, not just the first. */
export class Findings {
  readonly problems: SpecProblem[] = [];
  readonly warnings: string[] = [];
  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }
}

export function stringField(obj: Obj, name: string, path: string, f: Findings): string | undefined {
  const v = field(obj, name);
  if (isAbsent(v)) return undefined;
  if (typeof v !== "string") {
    f.problem(path, "must be a string");
    return undefined;
  }
  if (v.includes("\u0000")) {
    f.problem(path, "cannot contain a null character");
    return undefined;
  }
  return v;
}

/** A string that must be there and not blank: one problem for whatever is wrong with it. */
export function requiredString(obj: Obj, name: string, path: string, missing: string, f: Findings): string | undefined {
  const v = field(obj, name);
  if (isAbsent(v) || (typeof v === "string" && v.trim() === "")) {
    f.problem(path, missing);
    return undefined;
  }
  return stringField(obj, name, path, f);
}

export function integerField(obj: Obj, name: string, path: string, f: Findings): number | undefined {
  const v = field(obj, name);
  if (isAbsent(v)) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    f.problem(path, "must be a whole number");
    return undefined;
  }
  return v;
}

export function stringList(v: unknown, path: string, f: Findings): string[] {
  if (isAbsent(v)) return [];
  if (!Array.isArray(v)) {
    f.problem(path, "must be a list of strings");
    return [];
  }
  const out: string[] = [];
  v.forEach((item, i) => {
    if (typeof item === "string") out.push(item);
    else f.problem(`${path}[${i}]`, "must be a string");
  });
  return out;
}

export function stringMap(v: unknown, path: string, f: Findings): Record<string, string> {
  if (isAbsent(v)) return {};
  if (!isObject(v)) {
    f.problem(path, "must be a map of strings");
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    if (typeof value === "string") out[key] = value;
    else f.problem(`${path}.${key}`, "must be a string");
  }
  return out;
}
