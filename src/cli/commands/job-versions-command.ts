import type { JobJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import type { Column } from "../column.ts";
import { nanosToDate } from "../job-cells.ts";
import { JOB_COMMON_OPTIONS, NAMESPACE_OPTION } from "../job-options.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job versions --help";

export const OPTIONS = { ...JOB_COMMON_OPTIONS, ...OUTPUT_OPTIONS, ...NAMESPACE_OPTION } as const;

/** Bacalhau's columns (its "Created At" is the version's modify time); wide adds the version's state and message. */
export const VERSION_COLUMNS: readonly Column<JobJson>[] = [
  { header: "CREATED AT", cell: (j) => nanosToDate(j.ModifyTime) },
  { header: "JOB VERSION", cell: (j) => String(j.Version) },
  { header: "STATE", cell: (j) => j.State.StateType, wide: true },
  { header: "MESSAGE", cell: (j) => j.State.Message, wide: true },
];

/** `shoal job versions ID`: Bacalhau's `job versions`, every version of the job, oldest first (GET …/versions). */
export async function jobVersionsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job versions"));
    return 0;
  }
  const id = oneJobId(positionals, "versions", HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const q = new URLSearchParams();
  if (values.namespace) q.set("namespace", values.namespace);
  const res = await apiClientFrom(values).request<{ Items: JobJson[] }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}/versions?${q}`,
  );
  await printPage(output, VERSION_COLUMNS, res.Items, undefined);
  return 0;
}
