import { goDuration } from "../../../machines/job/go-duration.ts";
import { defaultsFor, type JobDefaults } from "../../../machines/job/job-defaults.ts";
import { DEFAULT_JOB_LIMITS, LIMIT_KEYS, MAX_TASKS, type JobLimits } from "../../../machines/job/job-limits.ts";
import { DEFAULT_NAMESPACE, isLongRunning } from "../../../machines/job/job-spec.ts";
import {
  Findings,
  field,
  integerField,
  isAbsent,
  isObject,
  quote,
  requiredString,
  stringField,
  stringList,
  stringMap,
  type Obj,
} from "../../../machines/job/spec-fields.ts";
import type { JobSubmission } from "../../../machines/job/job-commands.ts";
import { checkName, checkNamespace, checkResources } from "../../../machines/job/spec-limits.ts";
import { normalizeResourceString } from "../../../machines/job/task-resources.ts";
import {
  JobType,
  SelectorOperator,
  type JobSpec,
  type LabelSelectorRequirement,
  type ResourcesConfig,
  type TaskSpec,
  type TimeoutConfig,
} from "../../events/catalog/job-spec.ts";
import { validateTask } from "./validate-task.ts";

const JOB_TYPES = JobType.literals;
const SELECTOR_OPERATORS = SelectorOperator.literals;

export { problemText, type SpecProblem } from "../../../machines/job/spec-fields.ts";

export type { JobSubmission };

/** A submitted job, encoded as JSON, may be at most this large (its whole spec is stored in one event). */
export const MAX_JOB_SPEC_BYTES = 64 * 1024;

/** Bacalhau's MetaReservedPrefix: the system's own meta keys. */
const META_RESERVED_PREFIX = "bacalhau.org/";

function checkSanitized(job: Obj, type: string | undefined, f: Findings): void {
  // Bacalhau's SanitizeSubmission: server-owned fields are dropped with a warning.
  const state = field(job, "State");
  const stateType = isObject(state) ? field(state, "StateType") : undefined;
  if (!isAbsent(stateType) && stateType !== 0 && stateType !== "" && stateType !== "Undefined")
    f.warnings.push("job state is ignored when submitting a job");
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
    f.warnings.push(
      type === "batch" || type === "ops"
        ? "job ID is ignored when submitting a batch job"
        : "job ID is ignored when submitting a job: Shoal assigns every job's ID",
    );
  }
}

function jobType(job: Obj, f: Findings): JobType | undefined {
  const v = field(job, "Type");
  if (isAbsent(v) || v === "") {
    f.problem("Type", "missing job type");
    return undefined;
  }
  if (typeof v !== "string" || !(JOB_TYPES as readonly string[]).includes(v)) {
    f.problem(
      "Type",
      `invalid job type: ${typeof v === "string" ? quote(v) : JSON.stringify(v)} (one of ${JOB_TYPES.join(", ")})`,
    );
    return undefined;
  }
  return v as JobType;
}

function jobCount(job: Obj, type: JobType | undefined, limits: JobLimits, f: Findings): number {
  const count = integerField(job, "Count", "Count", f);
  if (count === undefined) return type === "batch" || type === "service" ? 1 : 0;
  if (count < 0) f.problem("Count", "job count must be >= 0");
  else if (count > limits.MaxCount && type !== "daemon" && type !== "ops") {
    f.problem("Count", `job count ${count} is more than the limit of ${limits.MaxCount} (${LIMIT_KEYS.MaxCount})`);
  } else if (count > 1 && (type === "daemon" || type === "ops"))
    f.problem("Count", `${type} jobs cannot specify count > 1 as they run on all matching nodes`);
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
      f.problem(
        `${path}.Operator`,
        `unknown operator ${typeof op === "string" ? quote(op) : JSON.stringify(op ?? null)} (one of ${SELECTOR_OPERATORS.join(" ")})`,
      );
    } else if (op === "in" || op === "notin") {
      if (values.length === 0) f.problem(`${path}.Values`, "selector values cannot be empty for In or NotIn operators");
    } else if (op === "exists" || op === "!") {
      if (values.length > 0)
        f.problem(`${path}.Values`, "selector values must be empty for Exists or KeyNotInImap operators");
    } else if (values.length !== 1) {
      f.problem(`${path}.Values`, "selector values must have exactly one value for other operators");
    } else if ((op === "gt" || op === "lt") && !/^-?\d+$/.test(values[0] as string)) {
      f.problem(`${path}.Values[0]`, `the value of a ${op} requirement must be a whole number`);
    }
    if (f.problems.length === before)
      out.push({ Key: key as string, Operator: op as SelectorOperator, Values: values });
  });
  return out;
}

function withoutReservedMeta(meta: Record<string, string>, path: string, f: Findings): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta)) {
    if (k.startsWith(META_RESERVED_PREFIX))
      f.warnings.push(
        `${path === "Meta" ? "job" : path} meta key ${JSON.stringify(k)} is reserved and will be ignored`,
      );
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
export function validateJobSubmission(
  input: unknown,
  options: { readonly jobId: string; readonly defaults: JobDefaults; readonly limits?: JobLimits },
): JobSubmission {
  const f = new Findings();
  const limits = options.limits ?? DEFAULT_JOB_LIMITS;
  if (!isObject(input))
    return {
      ok: false,
      problems: [{ path: "", message: "a job must be a map of fields (Bacalhau's models.Job: Type, Tasks, …)" }],
    };
  const bytes = new TextEncoder().encode(JSON.stringify(input) ?? "").byteLength;
  if (bytes > MAX_JOB_SPEC_BYTES)
    f.problem("", `the job is ${bytes} bytes as JSON; the limit is ${MAX_JOB_SPEC_BYTES}`);

  const type = jobType(input, f);
  checkSanitized(input, typeof field(input, "Type") === "string" ? (field(input, "Type") as string) : undefined, f);
  const count = jobCount(input, type, limits, f);
  const priority = integerField(input, "Priority", "Priority", f);
  const name = stringField(input, "Name", "Name", f);
  checkName(name, "Name", "job name", limits, f);
  const namespace = stringField(input, "Namespace", "Namespace", f);
  checkNamespace(namespace, "Namespace", f);
  const labels = stringMap(field(input, "Labels"), "Labels", f);
  const meta = withoutReservedMeta(stringMap(field(input, "Meta"), "Meta", f), "Meta", f);
  const requirements = constraints(input, f);

  const tasks = field(input, "Tasks");
  let first: TaskSpec | undefined;
  if (isAbsent(tasks) || (Array.isArray(tasks) && tasks.length === 0)) f.problem("Tasks", "missing job tasks");
  else if (!Array.isArray(tasks)) f.problem("Tasks", "must be a list of tasks");
  else {
    if (tasks.length > MAX_TASKS) f.problem("Tasks", `Shoal runs one task per job; this one has ${tasks.length}`);
    first = validateTask(tasks[0], "Tasks[0]", limits, f);
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
  checkResources((spec.Tasks[0] as TaskSpec).Resources, "Tasks[0].Resources", limits, f);
  if (f.problems.length > 0) return { ok: false, problems: f.problems };
  return { ok: true, spec, warnings: f.warnings };
}
