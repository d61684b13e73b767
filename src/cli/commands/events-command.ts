import type { ClusterEvent } from "../../projections/cluster-event.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
import { ndjsonLines, openNdjson } from "../ndjson-request.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { printData } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { printable } from "../printable.ts";
import { UsageError } from "../usage-error.ts";

const HELP_REF = "shoal events --help";

export const EVENTS_HELP = `Usage: shoal events [options]

The history of the whole cluster: every stored event of every node, job and execution, oldest
first, with who caused it and why. Filters combine (all must hold); a filter given several values
(repeated, or as a comma list) takes any of them.

Filters:
  --category C             node, job, execution or workflow (default: node, job and execution)
  --entity ID              a node's, job's or execution's id (exact); at most 10
  --type T                 an event type: NodeApproved, JobStopped, ... (docs/events.md); at most 20
  --actor A                who caused it, type[:id]: operator:alice, node:n-1, system, workflow:jobs; at most 10
  --since T                at or after T, an RFC 3339 time with an offset (2026-11-29T10:00:00Z)
  --until T                at or before T
  --after P                after store position P

Options:
  --limit N                events per page (default 100, at most 1000)
  --next-token T           the page after the one that printed T
  --output table|json|yaml|ndjson
                           table (default): TIME ENTITY EVENT BY REASON, one line each; json and
                           yaml print the page ({Items, NextToken}); ndjson prints every event
                           of the selection, one JSON object a line, without pages (no --limit)
  -f, --follow             print the events as they are stored, until Ctrl-C: from the newest
                           (or after --after P: the stored ones first); a dropped connection is
                           made again, resuming after the last event printed (table or ndjson)

${API_OPTIONS_HELP}`;

const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
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

export const EVENT_COLUMNS = ["TIME", "ENTITY", "EVENT", "BY", "REASON"] as const;

/** One event on one line; formatTable makes every cell printable. */
export function eventRow(e: ClusterEvent): string[] {
  const dash = e.stream.indexOf("-");
  const entity = dash === -1 ? e.stream : `${e.stream.slice(0, dash)}/${e.stream.slice(dash + 1)}`;
  const actor = e.metadata.actor as { type?: unknown; id?: unknown } | undefined;
  const by = actor === undefined ? "-" : `${String(actor.type ?? "?")}:${String(actor.id ?? "?")}`;
  const reason = e.metadata.reason;
  return [e.time, entity, e.type, by, typeof reason === "string" ? reason : ""];
}

const write = (text: string): Promise<void> =>
  new Promise((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once("drain", resolve)));

/**
 * `shoal events [filters] [--output table|json|yaml|ndjson]`: GET /api/v1/orchestrator/events (docs/audit.md, The
 * feed). The server checks the filters and answers a 400 naming the one that is wrong.
 */
export async function eventsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(EVENTS_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`shoal events takes no arguments (filter with --entity ${positionals[0]})`, HELP_REF);
  const format = values.output ?? "table";
  if (!["table", "json", "yaml", "ndjson"].includes(format))
    throw new UsageError(`--output must be table, json, yaml or ndjson, got ${format}`, HELP_REF);
  const ndjson = format === "ndjson";
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
  if (values.follow) return follow(api, q, values, format);
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
  if (format === "table") await printPage("table", EVENT_COLUMNS, res.Items, eventRow, more);
  else await printData(format === "yaml" ? "yaml" : "json", res);
  return 0;
}

/** Columns wide enough for most cells, so that rows printed one at a time line up. */
const FOLLOW_WIDTHS = [24, 28, 24, 24];

const followLine = (cells: readonly string[]) =>
  cells
    .map((c, i) => (i === cells.length - 1 ? printable(c) : printable(c).padEnd(FOLLOW_WIDTHS[i] ?? 0)))
    .join("  ")
    .trimEnd();

/** `--follow`: the event stream until Ctrl-C, which ends it with status 0. */
async function follow(
  api: ReturnType<typeof apiClientFrom>,
  q: URLSearchParams,
  values: { readonly limit?: string; readonly "next-token"?: string; readonly until?: string },
  format: string,
): Promise<number> {
  if (format !== "table" && format !== "ndjson")
    throw new UsageError("--follow prints a table or ndjson, one event a line", HELP_REF);
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
  if (format === "table") await write(`${followLine(EVENT_COLUMNS)}\n`);
  try {
    await followEvents(api, {
      query: q,
      after: after === null ? undefined : Number(after),
      prepare: () => api.request("GET", `/api/v1/orchestrator/events?${probe}`),
      onEvent: (data) =>
        write(`${format === "ndjson" ? printable(data) : followLine(eventRow(JSON.parse(data) as ClusterEvent))}\n`),
      signal: stop.signal,
      note: (text) => process.stderr.write(`${printable(text)}\n`),
    });
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
  return 0;
}
