import type { ExecutionJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { computeStateName, desiredStateName, elapsed, nanosToDate, shortId, timeOnly } from "../job-cells.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
import { listOrder, ORDER_BY, ORDER_OPTIONS } from "../list-order.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { outputFormat } from "../output-format.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";

const HELP_REF = "shoal job executions --help";
/** Bacalhau's `job executions` page size. */
const DEFAULT_LIMIT = 20;

export const JOB_EXECUTIONS_HELP = `Usage: shoal job executions <job-id> [options]

Lists a job's executions (Bacalhau's columns: created, modified, id, job version, node id,
revision, state, desired state).

Options:
  --limit N                executions per page (default ${DEFAULT_LIMIT})
  --next-token T           the page after the one that printed T
  --order-by FIELD         ${ORDER_BY.join(", ")} (default created_at)
  --order-reversed         last first; --reverse works too
  --output table|json|yaml table (default); json and yaml print the executions (Bacalhau's models.Execution)

${API_OPTIONS_HELP}`;

const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  limit: { type: "string" },
  "next-token": { type: "string" },
  ...ORDER_OPTIONS,
} as const;

export const EXECUTION_COLUMNS = [
  "CREATED",
  "MODIFIED",
  "ID",
  "JOB VERSION",
  "NODE ID",
  "REV.",
  "STATE",
  "DESIRED",
] as const;

export function executionRow(e: ExecutionJson): string[] {
  return [
    timeOnly(nanosToDate(e.CreateTime)),
    timeOnly(nanosToDate(e.ModifyTime)),
    shortId(e.ID),
    String(e.JobVersion),
    shortId(e.NodeID),
    String(e.Revision),
    computeStateName(e.ComputeState.StateType),
    desiredStateName(e.DesiredState.StateType),
  ];
}

/** `shoal job describe`'s execution table: Bacalhau's, times as how long ago. */
export const EXECUTION_SUMMARY_COLUMNS = [
  "ID",
  "NODE ID",
  "STATE",
  "DESIRED",
  "REV.",
  "CREATED",
  "MODIFIED",
  "COMMENT",
] as const;
export function executionSummaryRow(e: ExecutionJson): string[] {
  return [
    shortId(e.ID),
    shortId(e.NodeID),
    computeStateName(e.ComputeState.StateType),
    desiredStateName(e.DesiredState.StateType),
    String(e.Revision),
    elapsed(nanosToDate(e.CreateTime)),
    elapsed(nanosToDate(e.ModifyTime)),
    e.ComputeState.Message,
  ];
}

export async function jobExecutionsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(JOB_EXECUTIONS_HELP);
    return 0;
  }
  const id = oneJobId(positionals, "executions", HELP_REF);
  const format = outputFormat(values.output, "table", HELP_REF);
  const limit =
    values.limit === undefined ? DEFAULT_LIMIT : wholeNumberFlag(values.limit, "--limit", 1, 1000, HELP_REF);
  const order = listOrder(values, HELP_REF);
  const q = new URLSearchParams({ limit: String(limit) });
  if (values["next-token"] !== undefined) q.set("next_token", values["next-token"]);
  order.query(q);
  const res = await apiClientFrom(values).request<{ Items: ExecutionJson[]; NextToken: string }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}/executions?${q}`,
  );
  const again = [...order.flags, `--limit ${limit}`, `--next-token ${res.NextToken}`];
  const more = res.NextToken
    ? `To fetch more records use:\n\tshoal job executions ${id} ${again.join(" ")}`
    : undefined;
  await printPage(format, EXECUTION_COLUMNS, res.Items, executionRow, more);
  return 0;
}
