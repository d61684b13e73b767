import { NETWORK_TYPES } from "../../events/catalog/network-types.ts";
import { parseLabelSelector, type Requirement } from "../../labels/label-selector.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
import { RUN_SETTINGS_HELP, RUN_SETTINGS_OPTIONS, runSettingsFrom, submitJob } from "../job-submission.ts";
import { secondsFlag, wholeNumberFlag } from "../number-flag.ts";
import { printData } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { takeBooleanFlag } from "../take-boolean-flag.ts";
import { UsageError } from "../usage-error.ts";

const HELP_REF = "shoal docker run --help";

export const DOCKER_HELP = `Usage: shoal docker run [options] IMAGE [-- COMMAND [ARG…]]

Runs a Docker container as a job: builds a batch job (Bacalhau's models.Job, as \`bacalhau docker
run\` builds it) from the flags and submits it. Everything after IMAGE is the container's command;
put it after '--' when it has options of its own (shoal docker run busybox -- sh -c 'echo hi').

Job:
  --name NAME              the job's name (default: its id)
  --namespace NS           the job's namespace (default: default)
  --priority N             the job's priority
  --count N                how many executions (replicas) to run, each on its own node (default 1)
  --target any|all         any: a batch job (default); all: an ops job, one execution on every matching node
  -l, --labels K=V         the job's labels (repeat, or comma-separate: -l env=prod,team=a)
  --constraints SELECTOR   run only on nodes whose labels match (Kubernetes selector: zone=a,gpu in (1,2),!spot);
                           --constraint works too; repeats are ANDed

Task:
  --cpu C                  CPU (cores such as 0.5, or millicores such as 500m)
  --memory M               memory (512Mb, 1Gi, …)
  --disk D                 disk (1Gb, …)
  --gpu N                  GPUs
  --network TYPE           ${NETWORK_TYPES.map((t) => t.toLowerCase()).join(", ")} (default: the node's choice)
  --domain D               a domain the HTTP network may reach (repeat)
  --timeout T              the job's total timeout: seconds or a duration (90s, 5m) (Bacalhau's TotalTimeout)
  --execution-timeout T    each execution's timeout
  --queue-timeout T        how long the job may wait for a node (default 0: it fails at once if none can take it)
  -e, --env K=V            an environment variable of the container (repeat)
  --entrypoint CMD         override the image's entrypoint (repeat, or comma-separate: --entrypoint sh,-c)
  -w, --workdir DIR        the container's working directory (absolute)
  --task-name NAME         the task's name (default main)

Run:
  --dry-run                print the job (YAML) instead of submitting it; \`> job.yaml\` then \`shoal job run job.yaml\`
${RUN_SETTINGS_HELP}

${API_OPTIONS_HELP}`;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...RUN_SETTINGS_OPTIONS,
  name: { type: "string" },
  namespace: { type: "string" },
  priority: { type: "string" },
  count: { type: "string" },
  target: { type: "string" },
  labels: { type: "string", short: "l", multiple: true },
  constraints: { type: "string", multiple: true },
  constraint: { type: "string", multiple: true },
  cpu: { type: "string" },
  memory: { type: "string" },
  disk: { type: "string" },
  gpu: { type: "string" },
  network: { type: "string" },
  domain: { type: "string", multiple: true },
  timeout: { type: "string" },
  "execution-timeout": { type: "string" },
  "queue-timeout": { type: "string" },
  env: { type: "string", short: "e", multiple: true },
  entrypoint: { type: "string", multiple: true },
  workdir: { type: "string", short: "w" },
  "task-name": { type: "string" },
  "dry-run": { type: "boolean" },
} as const;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>["values"];

/**
 * Bacalhau's LabelSelectorRequirement of one parsed requirement, with the operator it was written with where that is
 * one value.
 */
function constraintOf(r: Requirement): { Key: string; Operator: string; Values: string[] } {
  switch (r.op) {
    case "in":
      return r.values.length === 1
        ? { Key: r.key, Operator: "=", Values: [...r.values] }
        : { Key: r.key, Operator: "in", Values: [...r.values] };
    case "notin":
      return r.values.length === 1
        ? { Key: r.key, Operator: "!=", Values: [...r.values] }
        : { Key: r.key, Operator: "notin", Values: [...r.values] };
    case "exists":
      return { Key: r.key, Operator: "exists", Values: [] };
    case "doesnotexist":
      return { Key: r.key, Operator: "!", Values: [] };
    default:
      return { Key: r.key, Operator: r.op, Values: [String(r.value)] };
  }
}

function constraints(values: Values): { Key: string; Operator: string; Values: string[] }[] {
  const texts = [...(values.constraints ?? []), ...(values.constraint ?? [])];
  return texts.flatMap((text) => {
    try {
      return parseLabelSelector(text).requirements.map(constraintOf);
    } catch (e) {
      throw new UsageError(`--constraints: ${(e as Error).message}`, HELP_REF);
    }
  });
}

/** Bacalhau's JobSettings.Labels: `k=v`, or `k` alone for an empty value; the server checks keys and values. */
function labels(values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (values.labels ?? []).flatMap((l) => l.split(","))) {
    const text = item.trim();
    if (text === "") continue;
    const eq = text.indexOf("=");
    out[eq < 0 ? text : text.slice(0, eq)] = eq < 0 ? "" : text.slice(eq + 1);
  }
  return out;
}

function env(values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of values.env ?? []) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`--env takes NAME=value, got ${JSON.stringify(item)}`, HELP_REF);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

function network(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const type = NETWORK_TYPES.find((t) => t.toLowerCase() === text.trim().toLowerCase());
  if (type === undefined)
    throw new UsageError(
      `--network must be one of ${NETWORK_TYPES.map((t) => t.toLowerCase()).join(", ")}, got ${JSON.stringify(text)}`,
      HELP_REF,
    );
  return type;
}

const nonEmpty = <T extends object>(o: T): T | undefined => (Object.keys(o).length === 0 ? undefined : o);
const defined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/**
 * The job `bacalhau docker run` would build from these flags (cmd/cli/helpers BuildJobFromFlags), with only the fields
 * given.
 */
export function dockerJob(values: Values, positionals: readonly string[]): Record<string, unknown> {
  const [image, ...parameters] = positionals;
  if (image === undefined || image.trim() === "") throw new UsageError("shoal docker run needs an IMAGE", HELP_REF);
  const target = values.target ?? "any";
  if (target !== "any" && target !== "all")
    throw new UsageError(`--target must be any or all, got ${JSON.stringify(target)}`, HELP_REF);
  if (target === "all" && values.count !== undefined)
    throw new UsageError("--count is for --target any: --target all runs on every matching node", HELP_REF);
  const seconds = (flag: "timeout" | "execution-timeout" | "queue-timeout") =>
    values[flag] === undefined ? undefined : secondsFlag(values[flag], `--${flag}`, HELP_REF);
  const entrypoint = (values.entrypoint ?? []).flatMap((e) => e.split(","));
  const networkType = network(values.network);
  if ((values.domain ?? []).length > 0 && networkType !== "HTTP")
    throw new UsageError("--domain needs --network http", HELP_REF);
  const task = defined({
    Name: values["task-name"] ?? "main",
    Engine: {
      Type: "docker",
      Params: defined({
        Image: image,
        Entrypoint: entrypoint.length > 0 ? entrypoint : undefined,
        Parameters: parameters.length > 0 ? [...parameters] : undefined,
        WorkingDirectory: values.workdir,
      }),
    },
    Resources: nonEmpty(defined({ CPU: values.cpu, Memory: values.memory, Disk: values.disk, GPU: values.gpu })),
    Timeouts: nonEmpty(
      defined({
        ExecutionTimeout: seconds("execution-timeout"),
        QueueTimeout: seconds("queue-timeout"),
        TotalTimeout: seconds("timeout"),
      }),
    ),
    Env: nonEmpty(env(values)),
    Network: networkType === undefined ? undefined : defined({ Type: networkType, Domains: values.domain }),
  });
  const selectorRequirements = constraints(values);
  return defined({
    Name: values.name,
    Namespace: values.namespace,
    Type: target === "all" ? "ops" : "batch",
    Priority:
      values.priority === undefined
        ? undefined
        : wholeNumberFlag(values.priority, "--priority", 0, Number.MAX_SAFE_INTEGER, HELP_REF),
    Count:
      target === "all"
        ? undefined
        : values.count === undefined
          ? 1
          : wholeNumberFlag(values.count, "--count", 1, 10_000, HELP_REF),
    Constraints: selectorRequirements.length > 0 ? selectorRequirements : undefined,
    Labels: nonEmpty(labels(values)),
    Tasks: [task],
  });
}

export async function dockerCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(DOCKER_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "run") throw new UsageError(`unknown docker command "${sub}": shoal docker has one, run`, HELP_REF);
  const { args: runArgs, value: wait } = takeBooleanFlag(rest, "wait", HELP_REF);
  const { values, positionals } = parseCommandArgs(runArgs, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(DOCKER_HELP);
    return 0;
  }
  if (values.output !== undefined)
    throw new UsageError(
      "shoal docker run has no --output (Bacalhau's result paths are not supported); --dry-run prints the job",
      HELP_REF,
    );
  const settings = runSettingsFrom(values, wait, HELP_REF);
  const job = dockerJob(values, positionals);
  if (values["dry-run"]) {
    await printData("yaml", job);
    return 0;
  }
  return submitJob(apiClientFrom(values), job, settings);
}
