import type { ClusterEvent } from "../../projections/cluster-event.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { ndjsonLines, openNdjson } from "../ndjson-request.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { timeCell, type Column } from "../column.ts";
import { formatCsv } from "../csv.ts";
import { eventActor, eventReason } from "../event-actor.ts";
import { OUTPUT_OPTIONS, outputOptions, type OutputOptions } from "../output-options.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { printable, printableCell } from "../printable.ts";
import { rowTexts, shownColumns } from "../render-rows.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal events --help";

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...OUTPUT_OPTIONS,
  category: { type: "string", multiple: true },
  entity: { type: "string", multiple: true },
  type: { type: "string", multiple: true },
  actor: { type: "string", multiple: true },
  since: { type: "string" },
  until: { type: "string" },
  after: { type: "string" },
  limit: { type: "string" },
  "next-token": { type: "string" },
  follow: { type: "boolean", short: "f" },
} as const;

/** One event on one line (the renderer makes every cell printable); wide adds where it is stored and its id. */
export const EVENT_COLUMNS: readonly Column<ClusterEvent>[] = [
  { header: "POSITION", cell: (e) => String(e.position), wide: true },
  { header: "TIME", cell: (e) => timeCell(e.time) },
  {
    header: "ENTITY",
    cell: (e) => {
      const dash = e.stream.indexOf("-");
      return dash === -1 ? e.stream : `${e.stream.slice(0, dash)}/${e.stream.slice(dash + 1)}`;
    },
  },
  { header: "REV", cell: (e) => String(e.revision), wide: true },
  { header: "EVENT", cell: (e) => e.type },
  { header: "BY", cell: eventActor },
  { header: "REASON", cell: eventReason },
  { header: "EVENT ID", cell: (e) => e.id, wide: true },
];

const write = (text: string): Promise<void> =>
  new Promise((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once("drain", resolve)));

/**
 * `shoal events [filters] [-o table|wide|json|yaml|csv|ndjson]`: GET /api/v1/orchestrator/events (docs/audit.md, The
 * feed). The server checks the filters and answers a 400 naming the one that is wrong.
 */
export async function eventsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal events"));
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`shoal events takes no arguments (filter with --entity ${positionals[0]})`, HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF, extra: ["ndjson"] });
  const ndjson = output.format === "ndjson";
  if (ndjson && values.limit !== undefined)
    throw new UsageError("--output ndjson prints the whole selection: it takes no --limit", HELP_REF);
  const q = new URLSearchParams();
  for (const name of ["category", "entity", "type", "actor"] as const)
    for (const value of values[name] ?? []) q.append(name, value);
  if (values.since !== undefined) q.set("since", values.since);
  if (values.until !== undefined) q.set("until", values.until);
  if (values.after !== undefined)
    q.set("after", String(wholeNumberFlag(values.after, "--after", 0, undefined, HELP_REF)));
  if (values["next-token"] !== undefined) q.set("next_token", values["next-token"]);
  const api = apiClientFrom(values);
  if (values.follow) return follow(api, q, values, output);
  if (ndjson) {
    // A page of one first: the credential the API takes, and a 400 for a wrong filter, come before the stream.
    const probe = new URLSearchParams(q);
    probe.set("limit", "1");
    await api.request("GET", `/api/v1/orchestrator/events?${probe}`);
    const response = await openNdjson(api, `/api/v1/orchestrator/events?${q}`);
    // Each line is JSON as the server wrote it; printable leaves it JSON (an escape inside a string is the same text).
    for await (const line of ndjsonLines(response)) await write(`${printable(line)}\n`);
    return 0;
  }
  if (values.limit !== undefined) q.set("limit", String(wholeNumberFlag(values.limit, "--limit", 1, 1000, HELP_REF)));
  const res = await api.request<{ Items: ClusterEvent[]; NextToken: string }>(
    "GET",
    `/api/v1/orchestrator/events?${q}`,
  );
  const more = res.NextToken ? `More events: the same options and --next-token ${res.NextToken}` : undefined;
  await printPage(output, EVENT_COLUMNS, res.Items, more, res);
  return 0;
}

/** Column widths for most cells, so that rows printed one at a time line up. */
const FOLLOW_WIDTHS: Readonly<Record<string, number>> = {
  POSITION: 8,
  TIME: 19,
  ENTITY: 28,
  REV: 4,
  EVENT: 24,
  BY: 24,
  REASON: 24,
};

const followLine = (cells: readonly string[], headers: readonly string[]) =>
  cells
    .map((c, i) =>
      i === cells.length - 1 ? printableCell(c) : printableCell(c).padEnd(FOLLOW_WIDTHS[headers[i] as string] ?? 0),
    )
    .join("  ")
    .trimEnd();

/** `--follow`: the event stream until Ctrl-C, which ends it with status 0. */
async function follow(
  api: ReturnType<typeof apiClientFrom>,
  q: URLSearchParams,
  values: { readonly limit?: string; readonly "next-token"?: string; readonly until?: string },
  output: OutputOptions<string>,
): Promise<number> {
  const format = output.format;
  if (format !== "table" && format !== "csv" && format !== "ndjson")
    throw new UsageError("--follow prints a table, csv or ndjson, one event a line", HELP_REF);
  for (const flag of ["limit", "next-token"] as const)
    if (values[flag] !== undefined) throw new UsageError(`--follow has no pages: it takes no --${flag}`, HELP_REF);
  // A page of one first: the credential the API takes, and a 400 for a wrong filter, come before the stream.
  const probe = new URLSearchParams(q);
  probe.set("limit", "1");
  const after = q.get("after");
  q.delete("after");
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  // Loaded only to follow: a page or an export never needs it.
  const { followEvents } = await import("../follow-events.ts");
  // Rows come one at a time: no box around them, the widths fixed.
  const shown = shownColumns(EVENT_COLUMNS, output.wide);
  const headers = shown.map((c) => c.header);
  const line = (cells: readonly string[]) =>
    format === "csv" ? formatCsv(undefined, [cells]) : followLine(cells, headers);
  if (format !== "ndjson" && output.header) await write(`${line(headers)}\n`);
  try {
    await followEvents(api, {
      query: q,
      after: after === null ? undefined : Number(after),
      prepare: () => api.request("GET", `/api/v1/orchestrator/events?${probe}`),
      onEvent: (data) =>
        write(`${format === "ndjson" ? printable(data) : line(rowTexts(shown, JSON.parse(data), output))}\n`),
      signal: stop.signal,
      note: (text) => process.stderr.write(`${printable(text)}\n`),
    });
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
  return 0;
}
