import { NETWORK_TYPES } from "../../events/catalog/network-types.ts";
import { parseLabelSelector, type Requirement } from "../../labels/label-selector.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { inputFlag } from "../input-flag.ts";
import { JOB_SUBMIT_OPTIONS } from "../job-options.ts";
import { RUN_SETTINGS_OPTIONS, runSettingsFrom, submitJob } from "../job-submission.ts";
import { secondsFlag, wholeNumberFlag } from "../number-flag.ts";
import { printData } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { takeBooleanFlag } from "../take-boolean-flag.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal docker run --help";

export const OPTIONS = {
  ...JOB_SUBMIT_OPTIONS,
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
  input: { type: "string", short: "i", multiple: true },
  entrypoint: { type: "string", multiple: true },
  workdir: { type: "string", short: "w" },
  "task-name": { type: "string" },
  output: { type: "string", short: "o", multiple: true },
  publisher: { type: "string", short: "p" },
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

/** Bacalhau's `-o NAME:PATH` (cmd/util/flags parseResultPath): exactly one colon, both sides given. */
function resultPaths(values: Values): { Name: string; Path: string }[] | undefined {
  const paths = (values.output ?? []).map((text) => {
    const tokens = text.split(":");
    if (tokens.length !== 2 || tokens[0] === "" || tokens[1] === "")
      throw new UsageError(`--output takes NAME:PATH (outputs:/outputs), got ${JSON.stringify(text)}`, HELP_REF);
    return { Name: tokens[0]!, Path: tokens[1]! };
  });
  return paths.length > 0 ? paths : undefined;
}

/**
 * Bacalhau's `-p`: a publisher type, or `target=TYPE`, with `opt=K=V` options. Only `local` publishes in this build;
 * the others are refused here as the server would refuse them, before anything is sent.
 */
function publisher(text: string | undefined): { Type: string } | undefined {
  if (text === undefined) return undefined;
  const fields = text.split(",").map((f) => f.trim());
  const head = fields[0] ?? "";
  const target = head.includes("=") ? fields.find((f) => /^(target|dst|destination)=/i.test(f))?.split("=")[1] : head;
  const type = (target ?? "")
    .replace(/^['" ]+|['" ]+$/g, "")
    .split(":")[0]!
    .toLowerCase();
  if (type !== "local")
    throw new UsageError(
      `--publisher: publisher type ${JSON.stringify(type)} is not supported: this build has local`,
      HELP_REF,
    );
  return { Type: "local" };
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
  const inputs = (values.input ?? []).map((text) => inputFlag(text, HELP_REF));
  const results = resultPaths(values);
  const publishTo = publisher(values.publisher);
  if (results !== undefined && publishTo === undefined)
    throw new UsageError("--output needs --publisher (-p local): result paths are published", HELP_REF);
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
    InputSources: inputs.length > 0 ? inputs : undefined,
    Publisher: publishTo,
    ResultPaths: results,
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
          : wholeNumberFlag(values.count, "--count", 1, undefined, HELP_REF),
    Constraints: selectorRequirements.length > 0 ? selectorRequirements : undefined,
    Labels: nonEmpty(labels(values)),
    Tasks: [task],
  });
}

export async function dockerCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(commandHelp("shoal docker run"));
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "run") throw new UsageError(`unknown docker command "${sub}": shoal docker has one, run`, HELP_REF);
  const { args: runArgs, value: wait } = takeBooleanFlag(rest, "wait", HELP_REF);
  const { values, positionals } = parseCommandArgs(runArgs, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal docker run"));
    return 0;
  }
  const settings = runSettingsFrom(values, wait, HELP_REF);
  const job = dockerJob(values, positionals);
  if (values["dry-run"]) {
    await printData("yaml", job);
    return 0;
  }
  return submitJob(apiClientFrom(values), job, settings);
}
