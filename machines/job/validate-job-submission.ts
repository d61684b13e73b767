import { goDuration } from "./go-duration.ts";
import { defaultsFor, type JobDefaults } from "./job-defaults.ts";
import {
  DEFAULT_NAMESPACE,
  JOB_TYPES,
  NETWORK_TYPES,
  SELECTOR_OPERATORS,
  isLongRunning,
  type DockerEngineParams,
  type JobSpec,
  type JobType,
  type LabelSelectorRequirement,
  type NetworkConfig,
  type NetworkType,
  type ResourcesConfig,
  type SelectorOperator,
  type TaskSpec,
  type TimeoutConfig,
} from "./job-spec.ts";
import { RESOURCE_FORMS, RESOURCE_PARSERS, normalizeResourceString } from "./task-resources.ts";

/** One thing wrong with a submitted job: where (Bacalhau's field path, e.g. `Tasks[0].Resources.CPU`) and what. */
export interface SpecProblem {
  readonly path: string;
  readonly message: string;
}

export type JobSubmission =
  | { readonly ok: true; readonly spec: JobSpec; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly problems: readonly SpecProblem[] };

/** A submitted job, encoded as JSON, may be at most this large (its whole spec is stored in one event). */
export const MAX_JOB_SPEC_BYTES = 64 * 1024;

/** Bacalhau's EnvVarPrefix and MetaReservedPrefix: the system's own names. */
const ENV_VAR_PREFIX = "BACALHAU_";
const META_RESERVED_PREFIX = "bacalhau.org/";

/** Bacalhau's domainRegex (models/network.go), anchored to the whole name. */
const DOMAIN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export const problemText = (p: SpecProblem): string => (p.path === "" ? p.message : `${p.path}: ${p.message}`);

type Obj = Readonly<Record<string, unknown>>;

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isAbsent = (v: unknown): boolean => v === undefined || v === null;
const quote = (s: string): string => JSON.stringify(s.length > 70 ? `${s.slice(0, 64)}…` : s);

/**
 * A field as Go's encoding/json finds it, which Bacalhau's API and CLI decode jobs with: the exact
 * name first, else one that differs only in case (`type: batch` is `Type`).
 */
function field(obj: Obj, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === lower) return obj[key];
  return undefined;
}

/** Collects problems and warnings while the walk goes on: every problem is named, not just the first. */
class Findings {
  readonly problems: SpecProblem[] = [];
  readonly warnings: string[] = [];
  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }
}

function stringField(obj: Obj, name: string, path: string, f: Findings): string | undefined {
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
function requiredString(obj: Obj, name: string, path: string, missing: string, f: Findings): string | undefined {
  const v = field(obj, name);
  if (isAbsent(v) || (typeof v === "string" && v.trim() === "")) {
    f.problem(path, missing);
    return undefined;
  }
  return stringField(obj, name, path, f);
}

function integerField(obj: Obj, name: string, path: string, f: Findings): number | undefined {
  const v = field(obj, name);
  if (isAbsent(v)) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    f.problem(path, "must be a whole number");
    return undefined;
  }
  return v;
}

function stringList(v: unknown, path: string, f: Findings): string[] {
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

function stringMap(v: unknown, path: string, f: Findings): Record<string, string> {
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

function checkSanitized(job: Obj, type: string | undefined, f: Findings): void {
  // Bacalhau's SanitizeSubmission: server-owned fields are dropped with a warning.
  const state = field(job, "State");
  const stateType = isObject(state) ? field(state, "StateType") : undefined;
  if (!isAbsent(stateType) && stateType !== 0 && stateType !== "" && stateType !== "Undefined") f.warnings.push("job state is ignored when submitting a job");
  for (const [name, what] of [
    ["Revision", "revision"],
    ["Version", "version"],
    ["CreateTime", "create time"],
    ["ModifyTime", "modify time"],
  ] as const) {
    const v = field(job, name);
    if (!isAbsent(v) && v !== 0) f.warnings.push(`job ${what} is ignored when submitting a job`);
  }
  const id = field(job, "ID");
  if (typeof id === "string" && id !== "") {
    f.warnings.push(type === "batch" || type === "ops" ? "job ID is ignored when submitting a batch job" : "job ID is ignored when submitting a job: Shoal assigns every job's ID");
  }
}

function jobType(job: Obj, f: Findings): JobType | undefined {
  const v = field(job, "Type");
  if (isAbsent(v) || v === "") {
    f.problem("Type", "missing job type");
    return undefined;
  }
  if (typeof v !== "string" || !(JOB_TYPES as readonly string[]).includes(v)) {
    f.problem("Type", `invalid job type: ${typeof v === "string" ? quote(v) : JSON.stringify(v)} (one of ${JOB_TYPES.join(", ")})`);
    return undefined;
  }
  return v as JobType;
}

function jobCount(job: Obj, type: JobType | undefined, f: Findings): number {
  const count = integerField(job, "Count", "Count", f);
  if (count === undefined) return type === "batch" || type === "service" ? 1 : 0;
  if (count < 0) f.problem("Count", "job count must be >= 0");
  else if (count > 1 && (type === "daemon" || type === "ops")) f.problem("Count", `${type} jobs cannot specify count > 1 as they run on all matching nodes`);
  else if (count === 0 && (type === "batch" || type === "service")) {
    // Bacalhau takes 0 as "stop all executions" of an existing job; a new job with none would do nothing.
    f.problem("Count", `a new ${type} job must run at least 1 replica`);
  }
  return type === "daemon" || type === "ops" ? 0 : count;
}

function constraints(job: Obj, f: Findings): LabelSelectorRequirement[] {
  const v = field(job, "Constraints");
  if (isAbsent(v)) return [];
  if (!Array.isArray(v)) {
    f.problem("Constraints", "must be a list of label selector requirements (Key, Operator, Values)");
    return [];
  }
  const out: LabelSelectorRequirement[] = [];
  v.forEach((c, i) => {
    const path = `Constraints[${i}]`;
    if (!isObject(c)) {
      f.problem(path, "must be a label selector requirement (Key, Operator, Values)");
      return;
    }
    const before = f.problems.length;
    const key = requiredString(c, "Key", `${path}.Key`, "selector key cannot be blank", f);
    const op = field(c, "Operator");
    const values = stringList(field(c, "Values"), `${path}.Values`, f);
    if (typeof op !== "string" || !(SELECTOR_OPERATORS as readonly string[]).includes(op)) {
      f.problem(`${path}.Operator`, `unknown operator ${typeof op === "string" ? quote(op) : JSON.stringify(op ?? null)} (one of ${SELECTOR_OPERATORS.join(" ")})`);
    } else if (op === "in" || op === "notin") {
      if (values.length === 0) f.problem(`${path}.Values`, "selector values cannot be empty for In or NotIn operators");
    } else if (op === "exists" || op === "!") {
      if (values.length > 0) f.problem(`${path}.Values`, "selector values must be empty for Exists or KeyNotInImap operators");
    } else if (values.length !== 1) {
      f.problem(`${path}.Values`, "selector values must have exactly one value for other operators");
    } else if ((op === "gt" || op === "lt") && !/^-?\d+$/.test(values[0] as string)) {
      f.problem(`${path}.Values[0]`, `the value of a ${op} requirement must be a whole number`);
    }
    if (f.problems.length === before) out.push({ Key: key as string, Operator: op as SelectorOperator, Values: values });
  });
  return out;
}

function dockerParams(engine: Obj, path: string, f: Findings): DockerEngineParams | undefined {
  const params = field(engine, "Params");
  if (!isObject(params)) {
    f.problem(`${path}.Params`, isAbsent(params) ? "missing docker engine params: Image is required" : "must be a map of docker engine params");
    return undefined;
  }
  const p = `${path}.Params`;
  const image = requiredString(params, "Image", `${p}.Image`, "missing image: 'Image' cannot be empty", f);
  const workdir = stringField(params, "WorkingDirectory", `${p}.WorkingDirectory`, f) ?? "";
  if (workdir !== "" && !workdir.startsWith("/")) f.problem(`${p}.WorkingDirectory`, `${quote(workdir)} must be an absolute path`);
  const env = stringList(field(params, "EnvironmentVariables"), `${p}.EnvironmentVariables`, f);
  env.forEach((e, i) => {
    const name = e.split("=", 1)[0] as string;
    if (name.toUpperCase().startsWith(ENV_VAR_PREFIX)) f.problem(`${p}.EnvironmentVariables[${i}]`, `environment variable ${quote(name)} cannot start with ${ENV_VAR_PREFIX}`);
  });
  return {
    Image: image ?? "",
    Entrypoint: stringList(field(params, "Entrypoint"), `${p}.Entrypoint`, f),
    Parameters: stringList(field(params, "Parameters"), `${p}.Parameters`, f),
    EnvironmentVariables: env,
    WorkingDirectory: workdir,
  };
}

function taskEnv(task: Obj, path: string, f: Findings): Record<string, string> {
  const env = stringMap(field(task, "Env"), path, f);
  // Bacalhau's ValidateEnvVars, each rule a problem of its own.
  for (const [name, value] of Object.entries(env)) {
    const at = `${path}.${name}`;
    if (name === "") f.problem(path, "environment variable name cannot be empty");
    else if (name !== name.toUpperCase()) f.problem(at, `environment variable ${quote(name)} must be uppercase`);
    else if (!/^\p{L}/u.test(name)) f.problem(at, `environment variable ${quote(name)} must start with a letter`);
    else if (!/^[\p{L}\p{N}_]+$/u.test(name)) f.problem(at, `environment variable ${quote(name)} can only contain letters, numbers, and underscores`);
    else if (name.startsWith(ENV_VAR_PREFIX)) f.problem(at, `environment variable ${quote(name)} cannot start with ${ENV_VAR_PREFIX}`);
    if (value === "") f.problem(at, `environment variable ${quote(name)} cannot have empty value`);
  }
  return env;
}

function taskResources(task: Obj, path: string, f: Findings): ResourcesConfig {
  const v = field(task, "Resources");
  if (isAbsent(v)) return {};
  if (!isObject(v)) {
    f.problem(path, "must be a map of CPU, Memory, Disk and GPU");
    return {};
  }
  const out: { -readonly [K in keyof ResourcesConfig]: string } = {};
  for (const key of ["CPU", "Memory", "Disk", "GPU"] as const) {
    const raw = field(v, key);
    if (isAbsent(raw) || raw === "") continue;
    // YAML writes `CPU: 1` as a number; Bacalhau's strings are what is meant.
    const text = typeof raw === "number" && Number.isFinite(raw) ? String(raw) : raw;
    if (typeof text !== "string") {
      f.problem(`${path}.${key}`, `must be a string: ${RESOURCE_FORMS[key]}`);
      continue;
    }
    const normalized = normalizeResourceString(text);
    if (RESOURCE_PARSERS[key](normalized) === undefined) f.problem(`${path}.${key}`, `invalid ${key === "CPU" || key === "GPU" ? key : key.toLowerCase()} value: ${quote(text)} (${RESOURCE_FORMS[key]})`);
    else out[key] = normalized;
  }
  return out;
}

function networkType(v: unknown): NetworkType | undefined {
  if (typeof v === "number") return Number.isInteger(v) ? NETWORK_TYPES[v] : undefined;
  if (typeof v !== "string") return undefined;
  return NETWORK_TYPES.find((t) => t.toLowerCase() === v.trim().toLowerCase());
}

function taskNetwork(task: Obj, path: string, f: Findings): NetworkConfig {
  const v = field(task, "Network");
  if (isAbsent(v)) return { Type: "Default", Domains: [] };
  if (!isObject(v)) {
    f.problem(path, "must be a network config (Type, Domains)");
    return { Type: "Default", Domains: [] };
  }
  const rawType = field(v, "Type");
  const type = isAbsent(rawType) ? "Default" : networkType(rawType);
  if (type === undefined) f.problem(`${path}.Type`, `invalid networking type ${JSON.stringify(rawType)} (one of ${NETWORK_TYPES.join(", ")})`);
  const domains = stringList(field(v, "Domains"), `${path}.Domains`, f).map((d) => d.trim().toLowerCase());
  if (domains.length > 0 && type !== undefined && type !== "HTTP") f.problem(`${path}.Domains`, "domains can only be set for HTTP network mode");
  domains.forEach((d, i) => {
    if (!DOMAIN.test(d) && !IPV4.test(d) && !d.includes(":")) f.problem(`${path}.Domains[${i}]`, `invalid domain ${quote(d)}`);
  });
  const ports = field(v, "Ports");
  if (Array.isArray(ports) ? ports.length > 0 : !isAbsent(ports)) f.problem(`${path}.Ports`, "port mappings are not supported by Shoal");
  return { Type: type ?? "Default", Domains: domains };
}

function taskTimeouts(task: Obj, path: string, f: Findings): TimeoutConfig {
  const v = field(task, "Timeouts");
  const out = { ExecutionTimeout: 0, QueueTimeout: 0, TotalTimeout: 0 };
  if (isAbsent(v)) return out;
  if (!isObject(v)) {
    f.problem(path, "must be a timeout config (ExecutionTimeout, QueueTimeout, TotalTimeout in seconds)");
    return out;
  }
  for (const [key, what] of [
    ["ExecutionTimeout", "execution"],
    ["QueueTimeout", "queue"],
    ["TotalTimeout", "total"],
  ] as const) {
    const n = integerField(v, key, `${path}.${key}`, f);
    if (n === undefined) continue;
    if (n < 0) f.problem(`${path}.${key}`, `invalid ${what} timeout value: ${goDuration(n)}`);
    else out[key] = n;
  }
  return out;
}

function task(raw: unknown, path: string, f: Findings): TaskSpec | undefined {
  if (!isObject(raw)) {
    f.problem(path, "must be a task (Name, Engine, Resources, …)");
    return undefined;
  }
  const name = requiredString(raw, "Name", `${path}.Name`, "missing task name", f);

  const engine = field(raw, "Engine");
  let params: DockerEngineParams | undefined;
  if (!isObject(engine)) f.problem(`${path}.Engine`, isAbsent(engine) ? "missing engine: a task runs on an engine (Type: docker)" : "must be an engine spec (Type, Params)");
  else {
    const type = requiredString(engine, "Type", `${path}.Engine.Type`, "missing spec type", f);
    if (type !== undefined && type.trim().toLowerCase() !== "docker") f.problem(`${path}.Engine.Type`, `engine type ${quote(type)} is not supported: Shoal runs docker`);
    params = dockerParams(engine, `${path}.Engine`, f);
  }

  const inputs = field(raw, "InputSources");
  if (Array.isArray(inputs) ? inputs.length > 0 : !isAbsent(inputs)) f.problem(`${path}.InputSources`, "input sources are not supported by Shoal");
  const publisher = field(raw, "Publisher");
  if (isObject(publisher) && Object.keys(publisher).length > 0 && (field(publisher, "Type") ?? "") !== "") f.warnings.push(`${path}.Publisher is ignored: Shoal does not publish results`);
  const results = field(raw, "ResultPaths");
  if (Array.isArray(results) && results.length > 0) f.warnings.push(`${path}.ResultPaths are ignored: Shoal does not publish results`);

  const spec = {
    Name: name ?? "",
    Engine: { Type: "docker" as const, Params: params ?? { Image: "", Entrypoint: [], Parameters: [], EnvironmentVariables: [], WorkingDirectory: "" } },
    Env: taskEnv(raw, `${path}.Env`, f),
    Meta: stringMap(field(raw, "Meta"), `${path}.Meta`, f),
    Resources: taskResources(raw, `${path}.Resources`, f),
    Network: taskNetwork(raw, `${path}.Network`, f),
    Timeouts: taskTimeouts(raw, `${path}.Timeouts`, f),
  };
  return spec;
}

function withoutReservedMeta(meta: Record<string, string>, path: string, f: Findings): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta)) {
    if (k.startsWith(META_RESERVED_PREFIX)) f.warnings.push(`${path === "Meta" ? "job" : path} meta key ${JSON.stringify(k)} is reserved and will be ignored`);
    else out[k] = v;
  }
  return out;
}

/** Bacalhau's DefaultsApplier: what the job leaves unset, its type's defaults set. */
function applyDefaults(spec: JobSpec, defaults: JobDefaults): JobSpec {
  const d = defaultsFor(defaults, spec.Type);
  const t = spec.Tasks[0] as TaskSpec;
  const r = t.Resources;
  const resources: ResourcesConfig = Object.fromEntries(
    (["CPU", "Memory", "Disk", "GPU"] as const)
      .map((k) => [k, r[k] !== undefined && r[k] !== "" ? r[k] : d.Task.Resources[k] === undefined ? undefined : normalizeResourceString(d.Task.Resources[k] as string)] as const)
      .filter(([, v]) => v !== undefined && v !== ""),
  );
  const dt = d.Task.Timeouts;
  // Bacalhau sets no timeout defaults for long-running jobs: they run until stopped.
  const batchLike = !isLongRunning(spec.Type);
  const timeouts: TimeoutConfig = {
    ExecutionTimeout: t.Timeouts.ExecutionTimeout > 0 || !batchLike ? t.Timeouts.ExecutionTimeout : (dt.ExecutionTimeout ?? 0),
    QueueTimeout: t.Timeouts.QueueTimeout > 0 || spec.Type === "daemon" ? t.Timeouts.QueueTimeout : (dt.QueueTimeout ?? 0),
    TotalTimeout: t.Timeouts.TotalTimeout > 0 || !batchLike ? t.Timeouts.TotalTimeout : (dt.TotalTimeout ?? 0),
  };
  return {
    ...spec,
    Priority: spec.Priority !== 0 ? spec.Priority : d.Priority,
    Tasks: [{ ...t, Resources: resources, Timeouts: timeouts }],
  };
}

/** Bacalhau's TimeoutConfig.Validate, run once the defaults are in. */
function checkTimeouts(type: JobType, t: TimeoutConfig, f: Findings): void {
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

/**
 * A submitted job (Bacalhau's models.Job as decoded from JSON or YAML) made into the spec Shoal
 * stores, or every problem with it. Bacalhau's submission path, in its order: SanitizeSubmission
 * (server-owned fields dropped, with warnings), ValidateSubmission, the defaults (JobDefaults of
 * the job's type; the name defaults to the job's ID), Normalize, and Validate (the timeouts
 * against TotalTimeout). Unlike Bacalhau, which stops at the first decode error, every problem
 * is named at once, each with its field path; field names match case-insensitively, as Go's
 * JSON decoder matches them. Pure: the host supplies the job's ID and the defaults.
 */
export function validateJobSubmission(input: unknown, options: { readonly jobId: string; readonly defaults: JobDefaults }): JobSubmission {
  const f = new Findings();
  if (!isObject(input)) return { ok: false, problems: [{ path: "", message: "a job must be a map of fields (Bacalhau's models.Job: Type, Tasks, …)" }] };
  const bytes = new TextEncoder().encode(JSON.stringify(input) ?? "").byteLength;
  if (bytes > MAX_JOB_SPEC_BYTES) f.problem("", `the job is ${bytes} bytes as JSON; the limit is ${MAX_JOB_SPEC_BYTES}`);

  const type = jobType(input, f);
  checkSanitized(input, typeof field(input, "Type") === "string" ? (field(input, "Type") as string) : undefined, f);
  const count = jobCount(input, type, f);
  const priority = integerField(input, "Priority", "Priority", f);
  const name = stringField(input, "Name", "Name", f);
  const namespace = stringField(input, "Namespace", "Namespace", f);
  const labels = stringMap(field(input, "Labels"), "Labels", f);
  const meta = withoutReservedMeta(stringMap(field(input, "Meta"), "Meta", f), "Meta", f);
  const requirements = constraints(input, f);

  const tasks = field(input, "Tasks");
  let first: TaskSpec | undefined;
  if (isAbsent(tasks) || (Array.isArray(tasks) && tasks.length === 0)) f.problem("Tasks", "missing job tasks");
  else if (!Array.isArray(tasks)) f.problem("Tasks", "must be a list of tasks");
  else {
    if (tasks.length > 1) f.warnings.push("only one task is supported per job");
    first = task(tasks[0], "Tasks[0]", f);
  }

  if (type === undefined || first === undefined || f.problems.length > 0) {
    // The timeouts are checked against the defaults too when all else is sound; otherwise the job's own.
    if (first && type) checkTimeouts(type, first.Timeouts, f);
    return { ok: false, problems: f.problems };
  }
  const submitted: JobSpec = {
    Name: name === undefined || name === "" ? options.jobId : name,
    Namespace: namespace === undefined || namespace === "" ? DEFAULT_NAMESPACE : namespace,
    Type: type,
    Priority: priority ?? 0,
    Count: count,
    Constraints: requirements,
    Labels: labels,
    Meta: meta,
    Tasks: [first],
  };
  const spec = applyDefaults(submitted, options.defaults);
  checkTimeouts(spec.Type, (spec.Tasks[0] as TaskSpec).Timeouts, f);
  if (f.problems.length > 0) return { ok: false, problems: f.problems };
  return { ok: true, spec, warnings: f.warnings };
}
