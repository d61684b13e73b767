import { goDuration } from "../../../machines/job/go-duration.ts";
import type { JobSubmission } from "../../../machines/job/job-commands.ts";
import { applyJobDefaults, type JobDefaults } from "../../../machines/job/job-defaults.ts";
import {
  DEFAULT_JOB_LIMITS,
  LIMIT_KEYS,
  WIRE_ENV_NAME,
  WIRE_LIMITS,
  type JobLimits,
} from "../../../machines/job/job-limits.ts";
import { DEFAULT_NAMESPACE, taskOf } from "../../../machines/job/job-spec.ts";
import { quote } from "../../../machines/job/spec-fields.ts";
import {
  checkImage,
  checkLength,
  checkList,
  checkName,
  checkResources,
  checkTimeouts,
  checkWorkingDirectory,
} from "../../../machines/job/spec-limits.ts";
import { RESOURCE_FORMS, RESOURCE_PARSERS, normalizeResourceString } from "../../../machines/job/task-resources.ts";
import type {
  JobSpec,
  JobType,
  LabelSelectorRequirement,
  NetworkType,
  ResourcesConfig,
  SelectorOperator,
  TaskSpec,
  TimeoutConfig,
} from "../../events/catalog/job-spec.ts";
import { META_RESERVED_PREFIX, SubmittedJob, publisherTypeOf } from "../../events/catalog/submitted-job.ts";
import { storedInputSources } from "../../events/catalog/submitted-input-source.ts";
import { walkSchema, type Findings, type Hooks, type SpecProblem } from "../../events/catalog/walk-schema.ts";

export { problemText } from "../../../machines/job/spec-fields.ts";
export { MAX_JOB_SPEC_BYTES } from "../../events/catalog/submitted-job.ts";
export type { JobSubmission, SpecProblem };

type Read = Readonly<Record<string, unknown>>;

const RESOURCE_KEYS = ["CPU", "Memory", "Disk", "GPU"] as const;
const TIMEOUT_NAMES: { readonly [K in keyof TimeoutConfig]: string } = {
  ExecutionTimeout: "execution",
  QueueTimeout: "queue",
  TotalTimeout: "total",
};

/** A resource as submitted, as text (YAML writes `CPU: 1` as a number). */
const resourceText = (v: unknown): string => (typeof v === "number" ? String(v) : (v as string));

/**
 * What the schema cannot say, at the field it is about (so that problems are named in the order of
 * the fields): the configured JobLimits, and the rules whose code machines/job owns (resource
 * strings, the wire's env names, Go's durations).
 */
function limitHooks(limits: JobLimits): Hooks {
  let hooks = hooksByLimits.get(limits);
  if (hooks === undefined) hooksByLimits.set(limits, (hooks = makeLimitHooks(limits)));
  return hooks;
}
const hooksByLimits = new WeakMap<JobLimits, Hooks>();

function makeLimitHooks(limits: JobLimits): Hooks {
  const hooks: Record<string, (value: unknown, at: { path: string; key?: string; parent: Read }, f: Findings) => void> =
    {
      Count: (count, at, f) => {
        const type = at.parent.Type;
        if ((count as number) > limits.MaxCount && type !== "daemon" && type !== "ops") {
          const message = `job count ${count as number} is more than the limit of ${limits.MaxCount} (${LIMIT_KEYS.MaxCount})`;
          f.problem(at.path, message);
        }
      },
      Name: (name, at, f) => checkName(name as string, at.path, "job name", limits, f),
      "Tasks[].Name": (name, at, f) => checkName(name as string, at.path, "task name", limits, f),
      "Tasks[].Engine.Params.Image": (image, at, f) => checkImage(image as string, at.path, limits, f),
      "Tasks[].Engine.Params.WorkingDirectory": (dir, at, f) =>
        checkWorkingDirectory(dir as string, at.path, limits, f),
      "Tasks[].Engine.Params.EnvironmentVariables": (env, at, f) => {
        const max = { items: "MaxEnvironmentVariables", length: "MaxEnvValueLength" } as const;
        checkList(env as string[], at.path, max, limits, f);
      },
      "Tasks[].Engine.Params.Entrypoint": (list, at, f) => {
        checkList(list as string[], at.path, { items: "MaxEntrypointItems", length: "MaxArgumentLength" }, limits, f);
      },
      "Tasks[].Engine.Params.Parameters": (list, at, f) => {
        checkList(list as string[], at.path, { items: "MaxParameters", length: "MaxArgumentLength" }, limits, f);
      },
      "Tasks[].Env#count": (env, at, f) => {
        const n = Object.keys(env as object).length;
        if (n > limits.MaxEnvironmentVariables) {
          const key = LIMIT_KEYS.MaxEnvironmentVariables;
          f.problem(at.path, `${n} environment variables; the limit is ${limits.MaxEnvironmentVariables} (${key})`);
        }
      },
      // A name the schema's rules find sound may still be more than the work protocol carries.
      "Tasks[].Env.*#name": (name, at, f) => {
        if (!WIRE_ENV_NAME.test(name as string)) {
          f.problem(
            at.path,
            `the name is ${(name as string).length} characters; the limit is ${WIRE_LIMITS.envNameLength}`,
          );
        }
      },
      "Tasks[].Env.*#value": (value, at, f) =>
        checkLength(
          value as string,
          at.path,
          `the value of ${quote(at.key as string)}`,
          "MaxEnvValueLength",
          limits,
          f,
        ),
    };
  for (const key of RESOURCE_KEYS) {
    hooks[`Tasks[].Resources.${key}`] = (value, at, f) => {
      const text = resourceText(value);
      if (text === "" || RESOURCE_PARSERS[key](normalizeResourceString(text)) !== undefined) return;
      const what = key === "CPU" || key === "GPU" ? key : key.toLowerCase();
      f.problem(at.path, `invalid ${what} value: ${quote(text)} (${RESOURCE_FORMS[key]})`);
    };
  }
  for (const [key, what] of Object.entries(TIMEOUT_NAMES)) {
    hooks[`Tasks[].Timeouts.${key}`] = (n, at, f) => {
      if ((n as number) < 0) f.problem(at.path, `invalid ${what} timeout value: ${goDuration(n as number)}`);
    };
  }
  return hooks;
}

/** The task Shoal stores, from what of a submitted one could be read. */
function taskOfRead(task: Read): TaskSpec {
  const engine = (task.Engine ?? {}) as Read;
  const params = (engine.Params ?? {}) as Read;
  const resources: Record<string, string> = {};
  const submitted = (task.Resources ?? {}) as Read;
  for (const key of RESOURCE_KEYS) {
    const v = submitted[key];
    if (v === undefined || v === "") continue;
    resources[key] = normalizeResourceString(resourceText(v));
  }
  const network = (task.Network ?? {}) as Read;
  const timeouts = (task.Timeouts ?? {}) as Partial<Record<keyof TimeoutConfig, number>>;
  const seconds = (key: keyof TimeoutConfig): number => Math.max(timeouts[key] ?? 0, 0);
  const inputs = (task.InputSources ?? []) as readonly Read[];
  return {
    Name: (task.Name as string | undefined) ?? "",
    Engine: {
      Type: "docker",
      Params: {
        Image: (params.Image as string | undefined) ?? "",
        Entrypoint: (params.Entrypoint as string[] | undefined) ?? [],
        Parameters: (params.Parameters as string[] | undefined) ?? [],
        EnvironmentVariables: (params.EnvironmentVariables as string[] | undefined) ?? [],
        WorkingDirectory: (params.WorkingDirectory as string | undefined) ?? "",
      },
    },
    Env: (task.Env as Record<string, string> | undefined) ?? {},
    Meta: (task.Meta as Record<string, string> | undefined) ?? {},
    Resources: resources as ResourcesConfig,
    Network: {
      Type: (network.Type as NetworkType | undefined) ?? "Default",
      Domains: ((network.Domains as string[] | undefined) ?? []).map((d) => d.trim().toLowerCase()),
    },
    Timeouts: {
      ExecutionTimeout: seconds("ExecutionTimeout"),
      QueueTimeout: seconds("QueueTimeout"),
      TotalTimeout: seconds("TotalTimeout"),
    },
    ...(inputs.length > 0 ? { InputSources: storedInputSources(inputs) } : {}),
    ...resultsOfRead(task),
  };
}

/** Bacalhau's Normalize of Publisher and ResultPaths: a blank publisher is none; names and paths trimmed. */
function resultsOfRead(task: Read): Pick<TaskSpec, "Publisher" | "ResultPaths"> {
  const publisher = (task.Publisher ?? {}) as Read;
  const type = publisherTypeOf((publisher.Type as string | undefined) ?? "");
  if (type === "") return {};
  const paths = (task.ResultPaths ?? []) as readonly Read[];
  return {
    Publisher: { Type: type, Params: { ...((publisher.Params as Read | undefined) ?? {}) } },
    ResultPaths: paths.map((p) => ({ Name: String(p.Name ?? "").trim(), Path: String(p.Path ?? "").trim() })),
  };
}

/**
 * A submitted job (Bacalhau's models.Job as decoded from JSON or YAML) made into the spec Shoal
 * stores, or every problem with it. Bacalhau's submission path, in its order: SanitizeSubmission
 * (server-owned fields dropped, with warnings), ValidateSubmission (the catalog's `SubmittedJob`
 * schema, read field by field, with the configured limits at their fields), the defaults
 * (JobDefaults of the job's type; the name defaults to the job's ID), Normalize, and Validate (the
 * timeouts against TotalTimeout). Unlike Bacalhau, which stops at the first decode error, every
 * problem is named at once, each with its field path. Pure: the host supplies the job's ID, the
 * defaults and the limits.
 */
export function validateJobSubmission(
  input: unknown,
  options: {
    readonly jobId: string;
    readonly defaults: JobDefaults;
    readonly limits?: JobLimits;
    /** The request's own Namespace beside the job (Bacalhau's BasePutRequest): the job's must be the same. */
    readonly requestNamespace?: string;
  },
): JobSubmission {
  const problems: SpecProblem[] = [];
  const f: Findings = { problems, warnings: [], problem: (path, message) => problems.push({ path, message }) };
  const read = walkSchema(SubmittedJob, input, limitHooks(options.limits ?? DEFAULT_JOB_LIMITS), f);
  if (read === undefined) return { ok: false, problems };

  const type = read.Type as JobType | undefined;
  const tasks = read.Tasks as readonly Read[] | undefined;
  const first = tasks?.[0] === undefined ? undefined : taskOfRead(tasks[0]);
  if (type === undefined || first === undefined || problems.length > 0) {
    // The timeouts are checked against the defaults too when all else is sound; otherwise the job's own.
    if (first && type) checkTimeouts(type, first.Timeouts, f);
    return { ok: false, problems };
  }
  const name = read.Name as string | undefined;
  const namespace = read.Namespace as string | undefined;
  const count = read.Count as number | undefined;
  const meta = Object.entries((read.Meta ?? {}) as Record<string, string>).filter(
    ([key]) => !key.startsWith(META_RESERVED_PREFIX),
  );
  const requirements = ((read.Constraints ?? []) as readonly Read[]).map((c): LabelSelectorRequirement => ({
    Key: c.Key as string,
    Operator: c.Operator as SelectorOperator,
    Values: (c.Values as string[] | undefined) ?? [],
  }));
  const submitted: JobSpec = {
    Name: name === undefined || name === "" ? options.jobId : name,
    Namespace: namespace === undefined || namespace === "" ? DEFAULT_NAMESPACE : namespace,
    Type: type,
    Priority: (read.Priority as number | undefined) ?? 0,
    Count: type === "daemon" || type === "ops" ? 0 : (count ?? 1),
    Constraints: requirements,
    Labels: (read.Labels as Record<string, string> | undefined) ?? {},
    Meta: Object.fromEntries(meta),
    Tasks: [first],
  };
  const asked = options.requestNamespace;
  if (asked !== undefined && asked !== submitted.Namespace) {
    const mine = JSON.stringify(submitted.Namespace);
    f.problem("Namespace", `the job's namespace ${mine} is not the request's ${JSON.stringify(asked)}`);
  }
  const spec = applyJobDefaults(submitted, options.defaults);
  checkTimeouts(spec.Type, taskOf(spec).Timeouts, f);
  checkResources(taskOf(spec).Resources, "Tasks[0].Resources", options.limits ?? DEFAULT_JOB_LIMITS, f);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, spec, warnings: f.warnings };
}
