import type { JobJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { AS_OF_OPTIONS, asOfQuery, printAsOfHeading } from "../as-of-flags.ts";
import type { Column } from "../column.ts";
import { nanosToDate, shortId } from "../job-cells.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { listOrder, ORDER_OPTIONS } from "../list-order.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job list --help";
/** Bacalhau's `job list` page size. */
const DEFAULT_LIMIT = 10;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...OUTPUT_OPTIONS,
  labels: { type: "string", multiple: true },
  namespace: { type: "string" },
  limit: { type: "string" },
  "next-token": { type: "string" },
  ...ORDER_OPTIONS,
  ...AS_OF_OPTIONS,
  watch: { type: "boolean", short: "w" },
} as const;

/** Bacalhau's columns (the engine under JOB); wide adds the namespace, the last change and the version. */
export const JOB_COLUMNS: readonly Column<JobJson>[] = [
  { header: "CREATED", cell: (j) => nanosToDate(j.CreateTime) },
  { header: "ID", cell: (j, { full }) => (full ? j.ID : shortId(j.ID)) },
  { header: "NAME", cell: (j) => j.Name },
  { header: "NAMESPACE", cell: (j) => j.Namespace, wide: true },
  { header: "JOB", cell: (j) => j.Tasks[0]?.Engine.Type ?? "" },
  { header: "TYPE", cell: (j) => j.Type },
  { header: "STATE", cell: (j) => j.State.StateType },
  { header: "MODIFIED", cell: (j) => nanosToDate(j.ModifyTime), wide: true },
  { header: "VERSION", cell: (j) => String(j.Version), wide: true },
];

export async function jobListCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job list"));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError("shoal job list takes no arguments", HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const limit =
    values.limit === undefined ? DEFAULT_LIMIT : wholeNumberFlag(values.limit, "--limit", 1, 10_000, HELP_REF);
  const order = listOrder(values, HELP_REF);
  const q = new URLSearchParams({ limit: String(limit) });
  for (const l of values.labels ?? []) q.append("labels", l);
  if (values.namespace !== undefined) q.set("namespace", values.namespace);
  if (values["next-token"] !== undefined) q.set("next_token", values["next-token"]);
  order.query(q);
  asOfQuery(values, q, HELP_REF);
  const api = apiClientFrom(values);
  const page = () => api.request<{ Items: JobJson[]; NextToken: string }>("GET", `/api/v1/orchestrator/jobs?${q}`);
  if (values.watch) {
    if (q.has("as_of") || q.has("at_position"))
      throw new UsageError("--watch shows the list as it is now: no --as-of or --at-position", HELP_REF);
    if (output.format !== "table") throw new UsageError("--watch prints a table (-o table or wide)", HELP_REF);
    const { watchList } = await import("../watch-list.ts");
    const { renderRows } = await import("../render-rows.ts");
    return watchList(api, {
      categories: "job,execution",
      draw: async () => renderRows(JOB_COLUMNS, (await page()).Items, output),
    });
  }
  const res = await page();
  // The cursor holds to the order and filters it was made with: the hint repeats them.
  const again = [
    ...(values.labels ?? []).map((l) => `--labels '${l}'`),
    ...(values.namespace === undefined ? [] : [`--namespace '${values.namespace}'`]),
    ...order.flags,
    ...(values["as-of"] === undefined ? [] : [`--as-of ${values["as-of"]}`]),
    ...(values["at-position"] === undefined ? [] : [`--at-position ${values["at-position"]}`]),
    `--limit ${limit}`,
    `--next-token ${res.NextToken}`,
  ];
  const more = res.NextToken ? `To fetch more records use:\n\tshoal job list ${again.join(" ")}` : undefined;
  if (output.format === "table") printAsOfHeading(values);
  await printPage(output, JOB_COLUMNS, res.Items, more);
  return 0;
}
