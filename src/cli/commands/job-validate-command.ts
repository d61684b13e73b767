import { goBodyKeys } from "../../api/go-body-keys.ts";
import { ShoalError } from "../../errors/shoal-error.ts";
import { SubmittedJob } from "../../events/catalog/submitted-job.ts";
import { validateJobSubmission } from "../../actors/job-submission/validate-job-submission.ts";
import { jobDefaultsOf } from "../../orchestrator/job-defaults-config.ts";
import { jobLimitsOf } from "../../orchestrator/job-limits-config.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { printProblems } from "../job-submission.ts";
import { TEMPLATE_OPTIONS, TemplateError, jobTemplateValues, renderJobText } from "../job-template.ts";
import { print, printError } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";
import { parseJobDocument, readJobText } from "./job-run-command.ts";

const HELP_REF = "shoal job validate --help";

export const OPTIONS = { ...CONFIG_OPTIONS, ...TEMPLATE_OPTIONS, help: { type: "boolean", short: "h" } } as const;

/**
 * `shoal job validate FILE`: Bacalhau's `job validate`, with no server: the job is read as `job run` reads it (a
 * template rendered with the same -V, -E and --no-template) and checked by the very rules PUT /jobs applies
 * (validateJobSubmission), with the JobDefaults and JobLimits of the config this command is given (-c, --config;
 * Shoal's defaults without). `OK` and exit 0, its warnings before; an invalid job, a template that does not render,
 * or a file that is not YAML or JSON, is said with every problem and exit 1; a file it cannot read or a wrong flag, 2.
 */
export async function jobValidateCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job validate"));
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError("shoal job validate takes exactly one file (or '-' for stdin)", HELP_REF);
  const file = positionals[0] as string;
  const text = readJobText(file, HELP_REF);
  const config = configFrom(values);
  const defaults = jobDefaultsOf(config);
  const limits = jobLimitsOf(config, defaults);
  const templateValues = jobTemplateValues(values, HELP_REF);
  let job: unknown;
  try {
    const document = await parseJobDocument(renderJobText(text, templateValues), file === "-" ? "stdin" : file);
    // Field names matched as PUT /jobs matches them: a field given twice in two cases is refused as the server does.
    job = goBodyKeys(SubmittedJob, document);
  } catch (e) {
    if (!(e instanceof UsageError || e instanceof TemplateError || e instanceof ShoalError)) throw e;
    printError(`Error: the job provided is invalid: ${e.message}`);
    return 1;
  }
  const checked = validateJobSubmission(job, { jobId: "j-validate", defaults, limits });
  if (!checked.ok) {
    printProblems(checked.problems);
    return 1;
  }
  for (const w of checked.warnings) printError(`Warning: ${w}`);
  print("OK");
  return 0;
}
