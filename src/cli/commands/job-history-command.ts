import type { JobHistoryJson } from "../job-shapes.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { timeCell, type Column } from "../column.ts";
import { historyActor, historyEventText, shortId } from "../job-cells.ts";
import { JOB_COMMON_OPTIONS, NAMESPACE_OPTION } from "../job-options.ts";
import { JOB_VERSIONS_OPTIONS, jobVersionsQuery } from "../job-version-flag.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job history --help";
const EVENT_TYPES = ["all", "job", "execution"] as const;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...OUTPUT_OPTIONS,
  ...JOB_VERSIONS_OPTIONS,
  ...NAMESPACE_OPTION,
  "event-type": { type: "string" },
  "execution-id": { type: "string" },
  since: { type: "string" },
  limit: { type: "string" },
  "next-token": { type: "string" },
} as const;

/** Bacalhau's columns and BY; wide adds the entry's sequence number. */
export const HISTORY_COLUMNS: readonly Column<JobHistoryJson>[] = [
  { header: "SEQ", cell: (h) => String(h.SeqNum), wide: true },
  { header: "TIME", cell: (h) => timeCell(h.Time) },
  { header: "LEVEL", cell: (h) => h.Type },
  { header: "JOB VERSION", cell: (h) => String(h.JobVersion) },
  { header: "EXEC. ID", cell: (h, { full }) => (h.ExecutionID ? (full ? h.ExecutionID : shortId(h.ExecutionID)) : "") },
  { header: "BY", cell: (h) => historyActor(h.Event) },
  { header: "TOPIC", cell: (h) => h.Event.Topic },
  { header: "EVENT", cell: (h) => historyEventText(h.Event) },
];

function sinceSeconds(text: string): number {
  if (/^\d{1,12}$/.test(text.trim())) return Number(text.trim());
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (Number.isNaN(ms) || ms < 0)
    throw new UsageError(`--since must be Unix seconds or an ISO 8601 time, got ${JSON.stringify(text)}`, HELP_REF);
  return Math.floor(ms / 1000);
}

export async function jobHistoryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job history"));
    return 0;
  }
  const id = oneJobId(positionals, "history", HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const eventType = values["event-type"];
  if (eventType !== undefined && !(EVENT_TYPES as readonly string[]).includes(eventType)) {
    throw new UsageError(
      `--event-type must be one of ${EVENT_TYPES.join(", ")}, got ${JSON.stringify(eventType)}`,
      HELP_REF,
    );
  }
  const q = new URLSearchParams();
  if (eventType !== undefined) q.set("event_type", eventType);
  if (values["execution-id"] !== undefined) q.set("execution_id", values["execution-id"]);
  if (values.since !== undefined) q.set("since", String(sinceSeconds(values.since)));
  if (values.limit !== undefined) q.set("limit", String(wholeNumberFlag(values.limit, "--limit", 1, 1000, HELP_REF)));
  if (values["next-token"] !== undefined) q.set("next_token", values["next-token"]);
  if (values.namespace) q.set("namespace", values.namespace);
  jobVersionsQuery(values, q, HELP_REF);
  const res = await apiClientFrom(values).request<{ Items: JobHistoryJson[]; NextToken: string }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}/history?${q}`,
  );
  const more = res.NextToken
    ? `To fetch more records use the same options and:\n\t--next-token ${res.NextToken}`
    : undefined;
  await printPage(output, HISTORY_COLUMNS, res.Items, more);
  return 0;
}
