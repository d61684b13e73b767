import { ParseResult, Schema } from "effect";
import { quote } from "../../../machines/job/spec-fields.ts";
import { DockerEngineParams, JobType, NetworkType, SelectorOperator } from "./job-spec.ts";
import { NETWORK_TYPES } from "./network-types.ts";
import { SubmittedInputSources } from "./submitted-input-source.ts";
import { PUBLISHER_TYPES, RESULT_OUTPUT_FILES } from "./publisher-types.ts";
import {
  BeforeChecks,
  Checks,
  ItemsRead,
  MissingMessage,
  ShapeMessage,
  UnknownFieldMessage,
  WarnsUnknownFields,
  field,
  isAbsent,
  isObject,
  type At,
  type Check,
  type Findings,
} from "./walk-schema.ts";

/**
 * A job as a client submits it (Bacalhau's models.Job as `PUT /api/v1/orchestrator/jobs` and
 * `shoal job run` take it): what each field may be, the message that refuses it, and the rules
 * between fields. src/actors/job-submission/ reads submissions with it (walk-schema.ts), adding
 * what it cannot say (configured limits, defaults); the OpenAPI document shows it as the request
 * body. Every field is optional but Type and Tasks; what it becomes once accepted is
 * `StoredJobSpec`. Bacalhau's Go decoder ignores fields it does not know and matches names
 * case-insensitively, so each object allows other properties (but the docker params: a node
 * would not apply them). The server-owned fields (ID, State, Version, …) are ignored with a
 * warning, as Bacalhau's SanitizeSubmission does.
 */

/** Bacalhau's MetaReservedPrefix: the system's own meta keys. */
export const META_RESERVED_PREFIX = "bacalhau.org/";
/** Bacalhau's EnvVarPrefix: the system's own environment variables. */
export const ENV_VAR_PREFIX = "BACALHAU_";
/** A submitted job, encoded as JSON, may be at most this large (its whole spec is stored in one event). */
export const MAX_JOB_SPEC_BYTES = 64 * 1024;
/** Shoal runs exactly one task per job (Bacalhau v1.x runs only the first). */
export const MAX_TASKS = 1;
/** Each result path is a mount of its own on the node. */
export const MAX_RESULT_PATHS = 16;
/** A result's name is a directory name on the node; its path one in the container. */
export const MAX_RESULT_NAME_LENGTH = 128;
export const MAX_RESULT_PATH_LENGTH = 1024;

/** Kubernetes' and Nomad's namespaces, together: letters, digits, '-', '_' and '.', a letter or digit first. */
const NAMESPACE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
/** Bacalhau's domainRegex (models/network.go), anchored to the whole name. */
const DOMAIN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

const Others = Schema.Record({ key: Schema.String, value: Schema.Unknown });
const shown = (v: unknown): string => (typeof v === "string" ? quote(v) : JSON.stringify(v ?? null));
const actual = (issue: { readonly actual: unknown }): unknown => issue.actual;
const checks = (...list: Check[]) => ({ [Checks]: list });

/** A string as Bacalhau's fields are: text without a null character. */
const Text = Schema.String.annotations({ message: () => "must be a string" }).pipe(
  Schema.filter((s) => !s.includes("\u0000"), { message: () => "cannot contain a null character" }),
);
const Item = Schema.String.annotations({ message: () => "must be a string" });
const Texts = Schema.Array(Item).annotations({ [ShapeMessage]: "must be a list of strings" });
const TextMap = Schema.Record({ key: Schema.String, value: Item }).annotations({
  [ShapeMessage]: "must be a map of strings",
});
/**
 * A number beyond 2^53 - 1 reads as some other whole number (9007199254740993 as ...992), so it is refused as too
 * large, before it could be called a fraction.
 */
const tooLarge = (n: number) =>
  n > 0 ? `is too large: at most ${Number.MAX_SAFE_INTEGER}` : `is too small: at least ${Number.MIN_SAFE_INTEGER}`;
const Whole = Schema.Number.annotations({ message: () => "must be a whole number" }).pipe(
  Schema.filter((n) => Math.abs(n) <= Number.MAX_SAFE_INTEGER || !Number.isFinite(n), {
    message: (issue) => tooLarge(actual(issue) as number),
  }),
  Schema.int({ message: () => "must be a whole number" }),
);
const Seconds = Whole.annotations({ description: "seconds; 0 or absent: none" });
const required = (message: string | ((raw: unknown) => string)) => ({
  [MissingMessage]: typeof message === "string" ? () => message : message,
});
const optional = <S extends Schema.Schema.Any>(schema: S, description?: string) =>
  Schema.optional(description === undefined ? schema : schema.annotations({ description }));

/** Count 0 of a new batch or service job, refused (an update's refusal says it its own way: JobControl). */
export const newJobWithoutReplicas = (type: string): string => `a new ${type} job must run at least 1 replica`;

const countRules: Check = (count, at, f) => {
  const type = at.parent.Type;
  const n = count as number;
  const onEveryNode = type === "daemon" || type === "ops";
  if (n < 0) f.problem(at.path, "job count must be >= 0");
  else if (n > 1 && onEveryNode) {
    f.problem(at.path, `${type} jobs cannot specify count > 1 as they run on all matching nodes`);
  } else if (n === 0 && (type === "batch" || type === "service")) {
    // Bacalhau takes 0 as "stop all executions" of an existing job; a new job with none would do nothing.
    f.problem(at.path, newJobWithoutReplicas(type));
  }
};

const namespaceRules: Check = (namespace, at, f) => {
  const ns = namespace as string;
  if (ns === "" || (NAMESPACE.test(ns) && !ns.includes(".."))) return;
  const rule = "1 to 63 letters, digits, '-', '_' or '.', a letter or digit first, without \"..\"";
  f.problem(at.path, `namespace ${quote(ns)} must be ${rule}`);
};

const reservedMeta: Check = (meta, at, f) => {
  for (const key of Object.keys(meta as object)) {
    if (key.startsWith(META_RESERVED_PREFIX))
      f.warnings.push(`job meta key ${JSON.stringify(key)} is reserved and will be ignored`);
  }
};

/** Bacalhau's SanitizeSubmission: server-owned fields are dropped with a warning. */
const sanitized: Check = (raw, _at, f) => {
  const job = raw as Readonly<Record<string, unknown>>;
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
  const type = field(job, "Type");
  if (typeof id === "string" && id !== "") {
    f.warnings.push(
      type === "batch" || type === "ops"
        ? "job ID is ignored when submitting a batch job"
        : "job ID is ignored when submitting a job: Shoal assigns every job's ID",
    );
  }
};

const storable: Check = (raw, _at, f) => {
  const bytes = new TextEncoder().encode(JSON.stringify(raw) ?? "").byteLength;
  if (bytes > MAX_JOB_SPEC_BYTES)
    f.problem("", `the job is ${bytes} bytes as JSON; the limit is ${MAX_JOB_SPEC_BYTES}`);
};

/** Kubernetes' selector rules: how many values each operator takes. */
const selectorValues: Check = (operator, at: At, f: Findings) => {
  const values = (at.parent.Values ?? []) as readonly string[];
  const path = `${at.parentPath}.Values`;
  if (operator === "in" || operator === "notin") {
    if (values.length === 0) f.problem(path, "selector values cannot be empty for In or NotIn operators");
  } else if (operator === "exists" || operator === "!") {
    if (values.length > 0) f.problem(path, "selector values must be empty for Exists or KeyNotInImap operators");
  } else if (values.length !== 1) {
    f.problem(path, "selector values must have exactly one value for other operators");
  } else if ((operator === "gt" || operator === "lt") && !/^-?\d+$/.test(values[0] as string)) {
    f.problem(`${path}[0]`, `the value of a ${operator} requirement must be a whole number`);
  }
};

const operators = SelectorOperator.literals;
const Requirement = Schema.Struct(
  {
    Key: Text.annotations(required("selector key cannot be blank")),
    Values: optional(Texts),
    Operator: SelectorOperator.annotations({
      message: (issue) => `unknown operator ${shown(actual(issue))} (one of ${operators.join(" ")})`,
      ...required((raw) => `unknown operator ${shown(raw)} (one of ${operators.join(" ")})`),
      ...checks(selectorValues),
    }),
  },
  Others,
).annotations({ [ShapeMessage]: "must be a label selector requirement (Key, Operator, Values)" });

const DOCKER_PARAMS = Object.keys(DockerEngineParams.fields);

const noSystemVariables: Check = (list, at, f) => {
  (list as readonly string[]).forEach((e, i) => {
    const name = e.split("=", 1)[0] as string;
    if (name.toUpperCase().startsWith(ENV_VAR_PREFIX))
      f.problem(`${at.path}[${i}]`, `environment variable ${quote(name)} cannot start with ${ENV_VAR_PREFIX}`);
  });
};

/** Bacalhau's documented example of each job type writes the task's Meta among the docker params; Go drops it. */
const ignoredParamsMeta: Check = (meta, at, f) => {
  if (!isAbsent(meta))
    f.warnings.push(
      `${at.path} is ignored: a task's meta goes in ${at.path.replace(/\.Engine\.Params\.[^.]*$/, ".Meta")}`,
    );
};

export const SubmittedDockerParams = Schema.Struct({
  Image: Text.annotations({
    description: "the image reference",
    ...required("missing image: 'Image' cannot be empty"),
  }),
  WorkingDirectory: optional(Text, "an absolute path in the container"),
  EnvironmentVariables: optional(
    Texts.annotations({ description: "NAME=value items; no name starts with BACALHAU_", ...checks(noSystemVariables) }),
  ),
  Entrypoint: optional(Texts),
  Parameters: optional(Texts),
  Meta: optional(Schema.Unknown.annotations({ description: "ignored", ...checks(ignoredParamsMeta) })),
}).annotations({
  [ShapeMessage]: "must be a map of docker engine params",
  ...required("missing docker engine params: Image is required"),
  // Privileged, Binds, CapAdd, host namespaces…: a node would run the container without them, not as asked.
  [UnknownFieldMessage]: (key: string) =>
    `docker engine param ${quote(key)} is not supported: Shoal nodes apply only ${DOCKER_PARAMS.join(", ")}`,
});

const dockerOnly: Check = (type, at, f) => {
  if ((type as string).trim().toLowerCase() !== "docker")
    f.problem(at.path, `engine type ${quote(type as string)} is not supported: Shoal runs docker`);
};

/**
 * Bacalhau's ValidateEnvVars, each rule a problem of its own, after the entries' types: the
 * caller's `#count` first (how many there may be), then per entry its name (the caller's `#name`
 * where these rules find none wrong) and its value (the caller's `#value` where it is not empty).
 */
const envVariables: Check = (env, at, f, hook) => {
  hook("count", env, at);
  for (const [name, value] of Object.entries(env as Record<string, string>)) {
    const entry: At = { ...at, path: `${at.path}.${name}`, pattern: `${at.pattern}.*`, key: name, parentPath: at.path };
    if (name === "") f.problem(at.path, "environment variable name cannot be empty");
    else if (name !== name.toUpperCase())
      f.problem(entry.path, `environment variable ${quote(name)} must be uppercase`);
    else if (!/^[A-Z]/.test(name))
      f.problem(entry.path, `environment variable ${quote(name)} must start with a letter`);
    else if (!/^[A-Z0-9_]+$/.test(name)) {
      f.problem(entry.path, `environment variable ${quote(name)} can only contain letters, numbers, and underscores`);
    } else if (name.startsWith(ENV_VAR_PREFIX)) {
      f.problem(entry.path, `environment variable ${quote(name)} cannot start with ${ENV_VAR_PREFIX}`);
    } else hook("name", name, entry);
    if (value === "") f.problem(entry.path, `environment variable ${quote(name)} cannot have empty value`);
    else hook("value", value, entry);
  }
};

const unsupported =
  (what: string): Check =>
  (v, at, f) => {
    if (Array.isArray(v) ? v.length > 0 : !isAbsent(v)) f.problem(at.path, what);
  };

/** Bacalhau's SpecConfig.Normalize: the type trimmed and in lower case. */
export const publisherTypeOf = (type: string): string => type.trim().toLowerCase();

const knownPublisher: Check = (type, at, f) => {
  const t = publisherTypeOf(type as string);
  if (t !== "" && !(PUBLISHER_TYPES as readonly string[]).includes(t))
    f.problem(
      at.path,
      `publisher type ${quote(type as string)} is not supported: this build has ${PUBLISHER_TYPES.join(", ")}`,
    );
};

/** A published result's directory name: one path segment that is not one of the command's own output files. */
const resultName: Check = (name, at, f) => {
  const n = (name as string).trim();
  if (n.length > MAX_RESULT_NAME_LENGTH)
    f.problem(at.path, `the result name is ${n.length} characters; the limit is ${MAX_RESULT_NAME_LENGTH}`);
  else if (n === "." || n === ".." || n.includes("/") || n.includes("\\"))
    f.problem(at.path, `result name ${quote(n)} must be a single directory name (no '/', not '.' or '..')`);
  else if ((RESULT_OUTPUT_FILES as readonly string[]).includes(n))
    f.problem(at.path, `result name ${quote(n)} is taken by the command's own ${n} file`);
};

const absolutePath: Check = (path, at, f) => {
  const p = (path as string).trim();
  if (p.length > MAX_RESULT_PATH_LENGTH)
    f.problem(at.path, `the result path is ${p.length} characters; the limit is ${MAX_RESULT_PATH_LENGTH}`);
  else if (!p.startsWith("/")) f.problem(at.path, `result path ${quote(p)} must be absolute`);
  else if (p.split("/").includes("..")) f.problem(at.path, `result path ${quote(p)} cannot contain '..'`);
  else if (p.replace(/\/+$/, "") === "") f.problem(at.path, "result path cannot be the container's root");
};

/** A container path's segments: `/data/`, `//data` and `/./data` are one directory. */
const segments = (path: string): string[] => path.split("/").filter((s) => s !== "" && s !== ".");

/**
 * A result path apart from every input's mount point: one at, under or over an input's Target would publish the
 * input as the job's result (or collide with its mount). Bacalhau has no such rule: its Docker executor mounts both
 * and the container fails to start ("Duplicate mount point") or the result holds the input; refused here instead, at
 * submission, naming both fields.
 */
function apartFromInputs(
  results: readonly Readonly<Record<string, unknown>>[],
  path: string,
  inputs: unknown,
  f: Findings,
): void {
  if (!Array.isArray(inputs)) return;
  const inputsPath = path.replace(/ResultPaths$/, "InputSources");
  results.forEach((result, i) => {
    const at = typeof result.Path === "string" ? result.Path.trim() : "";
    // A relative path or one with '..' is refused on its own.
    if (!at.startsWith("/") || at.split("/").includes("..")) return;
    const out = segments(at);
    (inputs as unknown[]).forEach((input, j) => {
      const target = isObject(input) ? field(input, "Target") : undefined;
      if (typeof target !== "string" || !target.trim().startsWith("/")) return;
      const mount = segments(target);
      const shared = Math.min(out.length, mount.length);
      if (out.slice(0, shared).join("/") !== mount.slice(0, shared).join("/")) return;
      const how = out.length === mount.length ? "is" : out.length > mount.length ? "lies under" : "holds";
      f.problem(
        `${path}[${i}].Path`,
        `result path ${quote(at)} ${how} ${inputsPath}[${j}].Target ${quote(target.trim())}: the ` +
          "result would publish the input mounted there; give the result a directory of its own",
      );
    });
  });
}

/** Bacalhau's validateResultPaths, and its rule that result paths need a publisher. */
const resultPathRules: Check = (paths, at, f) => {
  const list = paths as readonly Readonly<Record<string, unknown>>[];
  const names = new Set<string>();
  const dirs = new Set<string>();
  list.forEach((p, i) => {
    const name = typeof p.Name === "string" ? p.Name.trim() : "";
    const path = typeof p.Path === "string" ? p.Path.trim() : "";
    if (name !== "" && names.has(name))
      f.problem(`${at.path}[${i}].Name`, `result path with name ${quote(name)} already exists`);
    if (path !== "" && dirs.has(path)) f.problem(`${at.path}[${i}].Path`, `result path ${quote(path)} already exists`);
    names.add(name);
    dirs.add(path);
  });
  apartFromInputs(list, at.path, field(at.parentRaw, "InputSources"), f);
  const publisher = field(at.parentRaw, "Publisher");
  const type = isObject(publisher) ? field(publisher, "Type") : undefined;
  if (list.length > 0 && (typeof type !== "string" || type.trim() === ""))
    f.problem(at.path, "publisher must be set if result paths are set");
};

const resultPathCount: Check = (paths, at, f) => {
  const n = (paths as readonly unknown[]).length;
  if (n > MAX_RESULT_PATHS)
    f.problem(at.path, `a task may publish at most ${MAX_RESULT_PATHS} result paths; this one has ${n}`);
};

export const SubmittedResultPath = Schema.Struct(
  {
    Name: Text.annotations({
      description: "a directory name in the published result",
      ...required("missing name"),
      ...checks(resultName),
    }),
    Path: Text.annotations({
      description: "an absolute path in the container",
      ...required("missing path"),
      ...checks(absolutePath),
    }),
  },
  Others,
).annotations({ [ShapeMessage]: "must be a result path (Name, Path)", [WarnsUnknownFields]: [] });

/** What each resource string looks like: its description, and the message that refuses another kind of value. */
const quantity = (form: string) =>
  optional(
    // YAML writes `CPU: 1` as a number; Bacalhau's strings are what is meant.
    Schema.Union(Schema.String, Schema.Number).annotations({
      description: form,
      message: () => `must be a string: ${form}`,
    }),
  );

/** Bacalhau's models.Network by its text (any case, spaces around) or its number. */
const NetworkTypeIn = Schema.transformOrFail(Schema.Unknown, NetworkType, {
  strict: true,
  decode: (v, _, ast) => {
    const type =
      typeof v === "number"
        ? Number.isInteger(v)
          ? NETWORK_TYPES[v]
          : undefined
        : typeof v === "string"
          ? NETWORK_TYPES.find((t) => t.toLowerCase() === v.trim().toLowerCase())
          : undefined;
    return type === undefined ? ParseResult.fail(new ParseResult.Type(ast, v)) : ParseResult.succeed(type);
  },
  encode: (t) => ParseResult.succeed(t),
}).annotations({
  description: `one of ${NETWORK_TYPES.join(", ")} (any case), or its number; absent: Default`,
  jsonSchema: {
    anyOf: [
      { type: "string", enum: NETWORK_TYPES },
      { type: "integer", minimum: 0, maximum: NETWORK_TYPES.length - 1 },
    ],
  },
  message: (issue) => `invalid networking type ${JSON.stringify(actual(issue))} (one of ${NETWORK_TYPES.join(", ")})`,
});

const httpDomains: Check = (list, at, f) => {
  const domains = (list as readonly string[]).map((d) => d.trim().toLowerCase());
  const raw = field(at.parentRaw, "Type");
  const type = isAbsent(raw) ? "Default" : at.parent.Type;
  if (domains.length > 0 && type !== undefined && type !== "HTTP")
    f.problem(at.path, "domains can only be set for HTTP network mode");
  domains.forEach((d, i) => {
    if (!DOMAIN.test(d) && !IPV4.test(d) && !d.includes(":"))
      f.problem(`${at.path}[${i}]`, `invalid domain ${quote(d)}`);
  });
};

/**
 * A network the job asks for that a Shoal node runs only when its operator allows it, or never: the job is accepted
 * (Bacalhau's nodes take networked jobs), with a warning, since a node that does not allow it declines the job.
 */
const networkOffered: Check = (network, at, f) => {
  const type = (network as { readonly Type?: string }).Type;
  if (type === "HTTP")
    f.warnings.push(
      `${at.path}.Type: no node of this build offers network HTTP (Bacalhau's domain-filtering proxy): every node ` +
        "declines the job",
    );
  else if (type === "Host" || type === "Full" || type === "Bridge") {
    const as = type === "Bridge" ? "Full" : type;
    f.warnings.push(
      `${at.path}.Type: network ${type} runs only on nodes whose Compute.Docker.AllowedNetworks lists ${as} (a node ` +
        "allows None alone unless its operator says otherwise): every other node declines the job",
    );
  }
};

export const SubmittedTask = Schema.Struct(
  {
    Name: Text.annotations(required("missing task name")),
    Engine: Schema.Struct(
      {
        Type: Text.annotations({
          description: "Shoal runs docker (any case)",
          ...required("missing spec type"),
          ...checks(dockerOnly),
        }),
        Params: SubmittedDockerParams,
      },
      Others,
    ).annotations({
      [ShapeMessage]: "must be an engine spec (Type, Params)",
      [WarnsUnknownFields]: [],
      ...required("missing engine: a task runs on an engine (Type: docker)"),
    }),
    InputSources: optional(SubmittedInputSources),
    Publisher: optional(
      Schema.Struct(
        {
          Type: optional(
            Text.annotations({
              description: `one of ${PUBLISHER_TYPES.join(", ")}; blank: none`,
              ...checks(knownPublisher),
            }),
          ),
          Params: optional(Others.annotations({ [ShapeMessage]: "must be a map of publisher params" })),
        },
        Others,
      ).annotations({ [ShapeMessage]: "must be a publisher spec (Type, Params)", [WarnsUnknownFields]: [] }),
    ),
    ResultPaths: optional(
      Schema.Array(SubmittedResultPath).annotations({
        description: "directories of the container the publisher publishes, each under its name",
        [ShapeMessage]: "must be a list of result paths (Name, Path)",
        [ItemsRead]: MAX_RESULT_PATHS,
        [BeforeChecks]: [resultPathCount],
        ...checks(resultPathRules),
      }),
    ),
    Env: optional(
      Schema.Record({ key: Schema.String, value: Item }).annotations({
        description: "upper-case names; a value is literal, or env:HOST_VAR for the node to resolve",
        [ShapeMessage]: "must be a map of strings",
        ...checks(envVariables),
      }),
    ),
    Meta: optional(TextMap),
    Resources: optional(
      Schema.Struct(
        {
          CPU: quantity("cores such as 0.5 or 2, or millicores such as 500m"),
          Memory: quantity("bytes with a unit such as 512Mb, 1Gb or 1Gi"),
          Disk: quantity("bytes with a unit such as 512Mb, 10Gb or 10Gi"),
          GPU: quantity("a whole number of GPUs such as 1"),
        },
        Others,
      ).annotations({ [ShapeMessage]: "must be a map of CPU, Memory, Disk and GPU", [WarnsUnknownFields]: [] }),
    ),
    Network: optional(
      Schema.Struct(
        {
          Type: optional(NetworkTypeIn),
          Domains: optional(Texts.annotations({ description: "HTTP mode only", ...checks(httpDomains) })),
          Ports: optional(
            Schema.Unknown.annotations({
              description: "not supported",
              ...checks(unsupported("port mappings are not supported by Shoal")),
            }),
          ),
        },
        Others,
      ).annotations({
        [ShapeMessage]: "must be a network config (Type, Domains)",
        [WarnsUnknownFields]: [],
        ...checks(networkOffered),
      }),
    ),
    Timeouts: optional(
      Schema.Struct(
        { ExecutionTimeout: optional(Seconds), QueueTimeout: optional(Seconds), TotalTimeout: optional(Seconds) },
        Others,
      ).annotations({
        [ShapeMessage]: "must be a timeout config (ExecutionTimeout, QueueTimeout, TotalTimeout in seconds)",
        [WarnsUnknownFields]: [],
      }),
    ),
  },
  Others,
).annotations({ [ShapeMessage]: "must be a task (Name, Engine, Resources, …)", [WarnsUnknownFields]: [] });

const oneTask: Check = (tasks, at, f) => {
  const n = (tasks as readonly unknown[]).length;
  if (n > MAX_TASKS) f.problem(at.path, `Shoal runs one task per job; this one has ${n}`);
};

const jobTypes = JobType.literals;
const invalidJobType = (v: unknown): string => `invalid job type: ${shown(v)} (one of ${jobTypes.join(", ")})`;

export const SubmittedJob = Schema.Struct(
  {
    Type: JobType.annotations({
      message: (issue) => invalidJobType(actual(issue)),
      // Only an absent or empty type is missing: "  " is a type, and not one of them.
      ...required((raw) => (isAbsent(raw) || raw === "" ? "missing job type" : invalidJobType(raw))),
    }),
    Count: optional(
      Whole.annotations({
        description: "replicas of a batch or service job (absent: 1); ops, daemon: 0 or 1",
        ...checks(countRules),
      }),
    ),
    Priority: optional(Whole, "absent or 0: the type's JobDefaults.<Type>.Priority"),
    Name: optional(Text, "absent: the job's ID"),
    Namespace: optional(Text.annotations({ description: "absent: default", ...checks(namespaceRules) })),
    Labels: optional(TextMap),
    Meta: optional(
      TextMap.annotations({ description: "keys starting bacalhau.org/ are ignored", ...checks(reservedMeta) }),
    ),
    Constraints: optional(
      Schema.Array(Requirement).annotations({
        [ShapeMessage]: "must be a list of label selector requirements (Key, Operator, Values)",
      }),
    ),
    Tasks: Schema.Array(SubmittedTask).annotations({
      description: "exactly one task",
      ...required("missing job tasks"),
      [ShapeMessage]: "must be a list of tasks",
      [ItemsRead]: MAX_TASKS,
      [BeforeChecks]: [oneTask],
    }),
  },
  Others,
).annotations({
  description: "Bacalhau's models.Job",
  [ShapeMessage]: "a job must be a map of fields (Bacalhau's models.Job: Type, Tasks, …)",
  [BeforeChecks]: [storable, sanitized],
  // Server-owned fields: `sanitized` names each it drops.
  [WarnsUnknownFields]: ["ID", "State", "Revision", "Version", "CreateTime", "ModifyTime"],
});
export type SubmittedJob = typeof SubmittedJob.Type;
