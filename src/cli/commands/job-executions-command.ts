import type { ExecutionJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import type { Column } from "../column.ts";
import { computeStateName, desiredStateName, elapsed, nanosToDate, shortId } from "../job-cells.ts";
import { JOB_COMMON_OPTIONS, NAMESPACE_OPTION } from "../job-options.ts";
import { JOB_VERSIONS_OPTIONS, jobVersionsQuery } from "../job-version-flag.ts";
import { listOrder, ORDER_OPTIONS } from "../list-order.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job executions --help";
/** Bacalhau's `job executions` page size. */
const DEFAULT_LIMIT = 20;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...OUTPUT_OPTIONS,
  ...JOB_VERSIONS_OPTIONS,
  ...NAMESPACE_OPTION,
  limit: { type: "string" },
  "next-token": { type: "string" },
  ...ORDER_OPTIONS,
} as const;

const id = (text: string, full: boolean): string => (full ? text : shortId(text));

/** Bacalhau's columns; wide adds the state's message. */
export const EXECUTION_COLUMNS: readonly Column<ExecutionJson>[] = [
  { header: "CREATED", cell: (e) => nanosToDate(e.CreateTime) },
  { header: "MODIFIED", cell: (e) => nanosToDate(e.ModifyTime) },
  { header: "ID", cell: (e, { full }) => id(e.ID, full) },
  { header: "JOB VERSION", cell: (e) => String(e.JobVersion) },
  { header: "NODE ID", cell: (e, { full }) => id(e.NodeID, full) },
  { header: "REV.", cell: (e) => String(e.Revision) },
  { header: "STATE", cell: (e) => computeStateName(e.ComputeState.StateType) },
  { header: "DESIRED", cell: (e) => desiredStateName(e.DesiredState.StateType) },
  { header: "COMMENT", cell: (e) => e.ComputeState.Message, wide: true },
];

/** `shoal job describe`'s execution table: Bacalhau's, times as how long ago. */
export const EXECUTION_SUMMARY_COLUMNS: readonly Column<ExecutionJson>[] = [
  { header: "ID", cell: (e, { full }) => id(e.ID, full) },
  { header: "NODE ID", cell: (e, { full }) => id(e.NodeID, full) },
  { header: "STATE", cell: (e) => computeStateName(e.ComputeState.StateType) },
  { header: "DESIRED", cell: (e) => desiredStateName(e.DesiredState.StateType) },
  { header: "REV.", cell: (e) => String(e.Revision) },
  { header: "CREATED", cell: (e) => elapsed(nanosToDate(e.CreateTime)) },
  { header: "MODIFIED", cell: (e) => elapsed(nanosToDate(e.ModifyTime)) },
  { header: "COMMENT", cell: (e) => e.ComputeState.Message },
];

export async function jobExecutionsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job executions"));
    return 0;
  }
  const id = oneJobId(positionals, "executions", HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const limit =
    values.limit === undefined ? DEFAULT_LIMIT : wholeNumberFlag(values.limit, "--limit", 1, 1000, HELP_REF);
  const order = listOrder(values, HELP_REF);
  const q = new URLSearchParams({ limit: String(limit) });
  if (values["next-token"] !== undefined) q.set("next_token", values["next-token"]);
  if (values.namespace) q.set("namespace", values.namespace);
  const versions = jobVersionsQuery(values, q, HELP_REF);
  order.query(q);
  const res = await apiClientFrom(values).request<{ Items: ExecutionJson[]; NextToken: string }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}/executions?${q}`,
  );
  const again = [
    ...versions,
    ...(values.namespace ? [`--namespace ${values.namespace}`] : []),
    ...order.flags,
    `--limit ${limit}`,
    `--next-token ${res.NextToken}`,
  ];
  const more = res.NextToken
    ? `To fetch more records use:\n\tshoal job executions ${id} ${again.join(" ")}`
    : undefined;
  await printPage(output, EXECUTION_COLUMNS, res.Items, more);
  return 0;
}
