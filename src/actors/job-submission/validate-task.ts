import { goDuration } from "../../../machines/job/go-duration.ts";
import { LIMIT_KEYS, WIRE_ENV_NAME, WIRE_LIMITS, type JobLimits } from "../../../machines/job/job-limits.ts";
import {
  field,
  integerField,
  isAbsent,
  isObject,
  quote,
  requiredString,
  stringField,
  stringList,
  stringMap,
  type Findings,
  type Obj,
} from "../../../machines/job/spec-fields.ts";
import {
  checkImage,
  checkLength,
  checkList,
  checkName,
  checkWorkingDirectory,
} from "../../../machines/job/spec-limits.ts";
import { RESOURCE_FORMS, RESOURCE_PARSERS, normalizeResourceString } from "../../../machines/job/task-resources.ts";
import {
  DockerEngineParams,
  NetworkType,
  ResourcesConfig,
  TimeoutConfig,
  type NetworkConfig,
  type TaskSpec,
} from "../../events/catalog/job-spec.ts";

const NETWORK_TYPES = NetworkType.literals;

/** Bacalhau's EnvVarPrefix: the system's own environment variables. */
const ENV_VAR_PREFIX = "BACALHAU_";

/** Bacalhau's domainRegex (models/network.go), anchored to the whole name. */
const DOMAIN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Bacalhau's docker EngineSpec has these and no more; Shoal's nodes apply exactly these. */
const DOCKER_PARAMS = Object.keys(DockerEngineParams.fields) as readonly (keyof DockerEngineParams)[];
/** The resources and timeouts a task may set, in the schema's order (the order their problems are named in). */
const RESOURCE_KEYS = Object.keys(ResourcesConfig.fields) as readonly (keyof ResourcesConfig)[];
const TIMEOUT_KEYS = Object.keys(TimeoutConfig.fields) as readonly (keyof TimeoutConfig)[];
/** How a timeout's message names it ("invalid execution timeout value: -5s"). */
const TIMEOUT_NAMES: { readonly [K in keyof TimeoutConfig]: string } = {
  ExecutionTimeout: "execution",
  QueueTimeout: "queue",
  TotalTimeout: "total",
};

function dockerParams(engine: Obj, path: string, limits: JobLimits, f: Findings): DockerEngineParams | undefined {
  const params = field(engine, "Params");
  if (!isObject(params)) {
    f.problem(
      `${path}.Params`,
      isAbsent(params) ? "missing docker engine params: Image is required" : "must be a map of docker engine params",
    );
    return undefined;
  }
  const p = `${path}.Params`;
  // Privileged, Binds, CapAdd, host namespaces…: a node would run the container without them, not as asked.
  for (const key of Object.keys(params)) {
    if (DOCKER_PARAMS.some((known) => known.toLowerCase() === key.toLowerCase())) continue;
    const only = DOCKER_PARAMS.join(", ");
    f.problem(`${p}.${key}`, `docker engine param ${quote(key)} is not supported: Shoal nodes apply only ${only}`);
  }
  const image = requiredString(params, "Image", `${p}.Image`, "missing image: 'Image' cannot be empty", f);
  checkImage(image, `${p}.Image`, limits, f);
  const workdir = stringField(params, "WorkingDirectory", `${p}.WorkingDirectory`, f) ?? "";
  checkWorkingDirectory(workdir, `${p}.WorkingDirectory`, limits, f);
  const env = stringList(field(params, "EnvironmentVariables"), `${p}.EnvironmentVariables`, f);
  env.forEach((e, i) => {
    const name = e.split("=", 1)[0] as string;
    if (name.toUpperCase().startsWith(ENV_VAR_PREFIX))
      f.problem(
        `${p}.EnvironmentVariables[${i}]`,
        `environment variable ${quote(name)} cannot start with ${ENV_VAR_PREFIX}`,
      );
  });
  const envLimits = { items: "MaxEnvironmentVariables", length: "MaxEnvValueLength" } as const;
  checkList(env, `${p}.EnvironmentVariables`, envLimits, limits, f);
  const entrypoint = stringList(field(params, "Entrypoint"), `${p}.Entrypoint`, f);
  checkList(entrypoint, `${p}.Entrypoint`, { items: "MaxEntrypointItems", length: "MaxArgumentLength" }, limits, f);
  const parameters = stringList(field(params, "Parameters"), `${p}.Parameters`, f);
  checkList(parameters, `${p}.Parameters`, { items: "MaxParameters", length: "MaxArgumentLength" }, limits, f);
  return {
    Image: image ?? "",
    Entrypoint: entrypoint,
    Parameters: parameters,
    EnvironmentVariables: env,
    WorkingDirectory: workdir,
  };
}

function taskEnv(task: Obj, path: string, limits: JobLimits, f: Findings): Record<string, string> {
  const env = stringMap(field(task, "Env"), path, f);
  const entries = Object.entries(env);
  if (entries.length > limits.MaxEnvironmentVariables) {
    const key = LIMIT_KEYS.MaxEnvironmentVariables;
    f.problem(path, `${entries.length} environment variables; the limit is ${limits.MaxEnvironmentVariables} (${key})`);
  }
  // Bacalhau's ValidateEnvVars, each rule a problem of its own; names in ASCII, as the work protocol carries them.
  for (const [name, value] of entries) {
    const at = `${path}.${name}`;
    if (name === "") f.problem(path, "environment variable name cannot be empty");
    else if (name !== name.toUpperCase()) f.problem(at, `environment variable ${quote(name)} must be uppercase`);
    else if (!/^[A-Z]/.test(name)) f.problem(at, `environment variable ${quote(name)} must start with a letter`);
    else if (!/^[A-Z0-9_]+$/.test(name)) {
      f.problem(at, `environment variable ${quote(name)} can only contain letters, numbers, and underscores`);
    } else if (name.startsWith(ENV_VAR_PREFIX)) {
      f.problem(at, `environment variable ${quote(name)} cannot start with ${ENV_VAR_PREFIX}`);
    } else if (!WIRE_ENV_NAME.test(name)) {
      f.problem(at, `the name is ${name.length} characters; the limit is ${WIRE_LIMITS.envNameLength}`);
    }
    if (value === "") f.problem(at, `environment variable ${quote(name)} cannot have empty value`);
    else checkLength(value, at, `the value of ${quote(name)}`, "MaxEnvValueLength", limits, f);
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
  for (const key of RESOURCE_KEYS) {
    const raw = field(v, key);
    if (isAbsent(raw) || raw === "") continue;
    // YAML writes `CPU: 1` as a number; Bacalhau's strings are what is meant.
    const text = typeof raw === "number" && Number.isFinite(raw) ? String(raw) : raw;
    if (typeof text !== "string") {
      f.problem(`${path}.${key}`, `must be a string: ${RESOURCE_FORMS[key]}`);
      continue;
    }
    const normalized = normalizeResourceString(text);
    if (RESOURCE_PARSERS[key](normalized) === undefined)
      f.problem(
        `${path}.${key}`,
        `invalid ${key === "CPU" || key === "GPU" ? key : key.toLowerCase()} value: ${quote(text)} (${RESOURCE_FORMS[key]})`,
      );
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
  if (type === undefined)
    f.problem(
      `${path}.Type`,
      `invalid networking type ${JSON.stringify(rawType)} (one of ${NETWORK_TYPES.join(", ")})`,
    );
  const domains = stringList(field(v, "Domains"), `${path}.Domains`, f).map((d) => d.trim().toLowerCase());
  if (domains.length > 0 && type !== undefined && type !== "HTTP")
    f.problem(`${path}.Domains`, "domains can only be set for HTTP network mode");
  domains.forEach((d, i) => {
    if (!DOMAIN.test(d) && !IPV4.test(d) && !d.includes(":"))
      f.problem(`${path}.Domains[${i}]`, `invalid domain ${quote(d)}`);
  });
  const ports = field(v, "Ports");
  if (Array.isArray(ports) ? ports.length > 0 : !isAbsent(ports))
    f.problem(`${path}.Ports`, "port mappings are not supported by Shoal");
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
  for (const key of TIMEOUT_KEYS) {
    const what = TIMEOUT_NAMES[key];
    const n = integerField(v, key, `${path}.${key}`, f);
    if (n === undefined) continue;
    if (n < 0) f.problem(`${path}.${key}`, `invalid ${what} timeout value: ${goDuration(n)}`);
    else out[key] = n;
  }
  return out;
}

/**
 * A submitted job's task (Bacalhau's Task.ValidateSubmission and Normalize): the task Shoal
 * stores, its problems and warnings added to `f`; undefined when it is not a task at all.
 */
export function validateTask(raw: unknown, path: string, limits: JobLimits, f: Findings): TaskSpec | undefined {
  if (!isObject(raw)) {
    f.problem(path, "must be a task (Name, Engine, Resources, …)");
    return undefined;
  }
  const name = requiredString(raw, "Name", `${path}.Name`, "missing task name", f);
  checkName(name, `${path}.Name`, "task name", limits, f);

  const engine = field(raw, "Engine");
  let params: DockerEngineParams | undefined;
  if (!isObject(engine))
    f.problem(
      `${path}.Engine`,
      isAbsent(engine)
        ? "missing engine: a task runs on an engine (Type: docker)"
        : "must be an engine spec (Type, Params)",
    );
  else {
    const type = requiredString(engine, "Type", `${path}.Engine.Type`, "missing spec type", f);
    if (type !== undefined && type.trim().toLowerCase() !== "docker")
      f.problem(`${path}.Engine.Type`, `engine type ${quote(type)} is not supported: Shoal runs docker`);
    params = dockerParams(engine, `${path}.Engine`, limits, f);
  }

  const inputs = field(raw, "InputSources");
  if (Array.isArray(inputs) ? inputs.length > 0 : !isAbsent(inputs))
    f.problem(`${path}.InputSources`, "input sources are not supported by Shoal");
  const publisher = field(raw, "Publisher");
  if (isObject(publisher) && Object.keys(publisher).length > 0 && (field(publisher, "Type") ?? "") !== "")
    f.warnings.push(`${path}.Publisher is ignored: Shoal does not publish results`);
  const results = field(raw, "ResultPaths");
  if (Array.isArray(results) && results.length > 0)
    f.warnings.push(`${path}.ResultPaths are ignored: Shoal does not publish results`);

  const spec = {
    Name: name ?? "",
    Engine: {
      Type: "docker" as const,
      Params: params ?? { Image: "", Entrypoint: [], Parameters: [], EnvironmentVariables: [], WorkingDirectory: "" },
    },
    Env: taskEnv(raw, `${path}.Env`, limits, f),
    Meta: stringMap(field(raw, "Meta"), `${path}.Meta`, f),
    Resources: taskResources(raw, `${path}.Resources`, f),
    Network: taskNetwork(raw, `${path}.Network`, f),
    Timeouts: taskTimeouts(raw, `${path}.Timeouts`, f),
  };
  return spec;
}
