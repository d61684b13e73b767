import type { ExecutionJson, JobJson, JobHistoryJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { AS_OF_OPTIONS, asOfQuery, printAsOfHeading } from "../as-of-flags.ts";
import { timeCell, type Column } from "../column.ts";
import { computeStateName, historyActor, historyEventText, nanosToDate, shortId } from "../job-cells.ts";
import { JOB_COMMON_OPTIONS, NAMESPACE_OPTION } from "../job-options.ts";
import { localTime } from "../local-time.ts";
import { jobVersionFlag } from "../job-version-flag.ts";
import { printData, printRendered } from "../output-format.ts";
import { printable, printableCell } from "../printable.ts";
import { OUTPUT_OPTIONS, outputOptions, type OutputOptions } from "../output-options.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { renderRows } from "../render-rows.ts";
import { EXECUTION_SUMMARY_COLUMNS } from "./job-executions-command.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job describe --help";
/** The most the API includes of each list: a job's whole story in one read. */
const INCLUDED = 1000;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...OUTPUT_OPTIONS,
  ...AS_OF_OPTIONS,
  version: { type: "string", short: "v" },
  ...NAMESPACE_OPTION,
} as const;

interface Described {
  readonly Job: JobJson;
  readonly Executions?: { readonly Items: readonly ExecutionJson[] };
  readonly History?: { readonly Items: readonly JobHistoryJson[] };
}

/** Bacalhau's output.KeyValue: `Key = value`, the keys padded. */
function keyValues(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)} = ${v}`).join("\n");
}

const HISTORY_COLUMNS: readonly Column<JobHistoryJson>[] = [
  { header: "TIME", cell: (h) => timeCell(h.Time) },
  { header: "BY", cell: (h) => historyActor(h.Event) },
  { header: "TOPIC", cell: (h) => h.Event.Topic },
  { header: "EVENT", cell: (h) => historyEventText(h.Event) },
];

/** The summary's tables: as the flags shape them (--wide, --no-style, --hide-header). */
type TableOptions = Pick<OutputOptions, "wide" | "style" | "header">;
const PLAIN: TableOptions = { wide: false, style: false, header: true };

const safe = (text: string) => printable(text, { multiline: true });

/**
 * Bacalhau's `job describe` without --output (cmd/cli/job/describe.go). Printed as it is: the tables made their cells
 * printable, and every other piece from the API (the job's fields, ids, the output) passes printable here.
 */
export function describeText(res: Described, options: TableOptions = PLAIN): string {
  const table = <T>(columns: readonly Column<T>[], items: readonly T[]) =>
    renderRows(columns, items, { ...options, format: "table" });
  const job = res.Job;
  // Newest first, as Bacalhau lists them here.
  const executions = [...(res.Executions?.Items ?? [])].sort((a, b) => b.CreateTime - a.CreateTime);
  const history = res.History?.Items ?? [];
  const header: [string, string][] = [
    ["ID", job.ID],
    ["Name", job.Name],
    ["Namespace", job.Namespace],
    ["Type", job.Type],
    ["State", job.State.StateType],
    // One line, as the tables show a message: a multi-line one would run on past its key.
    ["Message", printableCell(job.State.Message)],
  ];
  if (job.Type === "batch" || job.Type === "service") header.push(["Count", String(job.Count)]);
  header.push(
    ["Created Time", localTime(nanosToDate(job.CreateTime))],
    ["Modified Time", localTime(nanosToDate(job.ModifyTime))],
    ["Version", String(job.Version)],
  );
  const parts = [safe(keyValues(header))];

  const byState = new Map<string, number>();
  for (const e of executions) {
    const state = computeStateName(e.ComputeState.StateType);
    byState.set(state, (byState.get(state) ?? 0) + 1);
  }
  parts.push(
    `Summary\n${byState.size === 0 ? "(no executions)" : keyValues([...byState].map(([s, n]) => [s, String(n)]))}`,
  );

  const jobHistory = history.filter((h) => h.Type === "JobLevel");
  if (jobHistory.length > 0) parts.push(`Job History\n${table(HISTORY_COLUMNS, jobHistory)}`);
  if (executions.length > 0) parts.push(`Executions\n${table(EXECUTION_SUMMARY_COLUMNS, executions)}`);
  for (const e of executions) {
    const own = history.filter((h) => h.ExecutionID === e.ID);
    if (own.length > 0) parts.push(`${safe(`Execution ${shortId(e.ID)} History`)}\n${table(HISTORY_COLUMNS, own)}`);
  }

  const outputs = executions.flatMap((e) => {
    const out = e.RunOutput;
    if (!out || (out.Stdout === "" && out.stderr === "")) return [];
    let text = [out.Stdout, out.stderr].filter((s) => s !== "").join("\n");
    if (out.StdoutTruncated || out.StderrTruncated) text += "\n...\nOutput truncated";
    return [{ id: e.ID, text }];
  });
  if (outputs.length === 1) parts.push(safe(`Standard Output\n${(outputs[0] as { text: string }).text.trimEnd()}`));
  else if (outputs.length > 1)
    parts.push(
      safe(`Standard Output\n${outputs.map((o) => `Execution ${shortId(o.id)}:\n${o.text.trimEnd()}`).join("\n\n")}`),
    );
  return parts.join("\n\n");
}

export async function jobDescribeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job describe"));
    return 0;
  }
  const id = oneJobId(positionals, "describe", HELP_REF);
  const output = outputOptions(values, { fallback: "yaml", help: HELP_REF, without: ["csv"] });
  const q = new URLSearchParams({ include: "executions,history", limit: String(INCLUDED) });
  if (values.version !== undefined) q.set("job_version", String(jobVersionFlag(values.version, HELP_REF)));
  if (values.namespace) q.set("namespace", values.namespace);
  asOfQuery(values, q, HELP_REF);
  const res = await apiClientFrom(values).request<Described>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}?${q}`,
  );
  if (output.format === "table") {
    printAsOfHeading(values);
    printRendered(describeText(res, output));
  } else await printData(output.format === "json" ? "json" : "yaml", res);
  return 0;
}
