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
    document = doc?.toJS();
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
