import { readFileSync } from "node:fs";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { dryRunJob } from "../dry-run-job.ts";
import { TEMPLATE_OPTIONS, TemplateError, jobTemplateValues, renderJobText } from "../job-template.ts";
import { JOB_SUBMIT_OPTIONS } from "../job-options.ts";
import { RUN_SETTINGS_OPTIONS, runSettingsFrom, submitJob } from "../job-submission.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { takeBooleanFlag } from "../take-boolean-flag.ts";
import { UsageError } from "../usage-error.ts";
import { unwrapJob } from "../unwrap-job.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job run --help";

export const OPTIONS = {
  ...JOB_SUBMIT_OPTIONS,
  ...RUN_SETTINGS_OPTIONS,
  "dry-run": { type: "boolean" },
  ...TEMPLATE_OPTIONS,
} as const;

export function readJobText(file: string, help = HELP_REF): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (e) {
    throw new UsageError(
      `cannot read the job from ${file === "-" ? "stdin" : file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      help,
    );
  }
}

/** How many alias expansions a job file may make (the yaml library's default): beyond it, an alias bomb. */
const MAX_YAML_ALIASES = 100;

/** The job in the file: JSON when it reads as JSON, else YAML (a superset, with its own error messages). */
export async function parseJobDocument(text: string, source: string): Promise<unknown> {
  if (text.trim() === "") throw new UsageError(`${source} is empty: expected a job in YAML or JSON`, HELP_REF);
  let document: unknown;
  if (/^\s*[{[]/.test(text)) {
    try {
      document = JSON.parse(text);
    } catch {
      document = undefined;
    }
  }
  if (document === undefined) {
    const YAML = await import("yaml");
    const docs = YAML.parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    if (list.length !== 1)
      throw new UsageError(`${source} holds ${list.length} YAML documents: expected one job`, HELP_REF);
    const [doc] = list;
    const error = doc?.errors[0];
    if (error) throw new UsageError(`${source} is not valid YAML or JSON: ${error.message}`, HELP_REF);
    // A list or map as a key has no JSON form: the yaml library would make it a string (and warn on stderr).
    let listKey: string | undefined;
    YAML.visit(doc!, {
      Pair(_, pair) {
        if (!YAML.isCollection(pair.key)) return undefined;
        const [start, end] = pair.key.range ?? [0, 0];
        listKey = text.slice(start, end).replace(/\s+/g, " ").trim();
        return YAML.visit.BREAK;
      },
    });
    if (listKey !== undefined) {
      const shown = listKey.length > 40 ? `${listKey.slice(0, 37)}...` : listKey;
      throw new UsageError(
        `${source} has a key that is a list or a map (${shown}): keys must be plain values`,
        HELP_REF,
      );
    }
    try {
      document = doc?.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    } catch (e) {
      // The yaml library's guard against a billion laughs: a ReferenceError that names no place in the file.
      if (!(e instanceof ReferenceError)) throw e;
      throw new UsageError(
        `the job file ${source}: too many YAML aliases (more than ${MAX_YAML_ALIASES} expanded)`,
        HELP_REF,
      );
    }
  }
  return unwrapJob(document);
}

export async function jobRunCommand(args: string[]): Promise<number> {
  const { args: rest, value: wait } = takeBooleanFlag(args, "wait", HELP_REF);
  const { values, positionals } = parseCommandArgs(rest, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job run"));
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError("shoal job run takes exactly one file (or '-' for stdin)", HELP_REF);
  const settings = runSettingsFrom(values, wait, HELP_REF);
  const file = positionals[0] as string;
  const templateValues = jobTemplateValues(values, HELP_REF);
  let text: string;
  try {
    text = renderJobText(readJobText(file), templateValues);
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    throw new UsageError(`the job provided is invalid: ${e.message}`, HELP_REF);
  }
  const job = await parseJobDocument(text, file === "-" ? "stdin" : file);
  if (values["dry-run"]) return dryRunJob(apiClientFrom(values), job);
  return submitJob(apiClientFrom(values), job, settings);
}
