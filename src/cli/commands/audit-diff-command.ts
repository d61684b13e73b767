import { parseRfc3339 } from "../../api/events/rfc3339-time.ts";
import type { AuditChange } from "../../projections/audit-diff/audit-change.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { localTimeOf, timeCell, type Column } from "../column.ts";
import { print, printData, printError, printRendered } from "../output-format.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { renderRows } from "../render-rows.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal audit diff --help";

export const OPTIONS = { ...JOB_COMMON_OPTIONS, ...OUTPUT_OPTIONS } as const;

interface DiffBody {
  readonly From: { readonly Position: number; readonly Time?: string };
  readonly To: { readonly Position: number; readonly Time?: string };
  readonly Through: number;
  readonly Nodes: AuditChange[];
  readonly Jobs: AuditChange[];
}

const labels = (values: unknown): string[] =>
  Object.entries((values ?? {}) as Record<string, unknown>).map(([k, v]) => `${k}=${String(v)}`);

/** The change, with what a label change added, removed and changed. */
function changeCell(c: AuditChange): string {
  if (c.Change !== "labels" || c.Details === undefined) return c.Change;
  const d = c.Details as { Added?: unknown; Removed?: unknown; Changed?: Record<string, { From: string; To: string }> };
  const parts = [
    ...labels(d.Added).map((l) => `+${l}`),
    ...Object.keys((d.Removed ?? {}) as object).map((k) => `-${k}`),
    ...Object.entries(d.Changed ?? {}).map(([k, v]) => `${k}=${v.From}->${v.To}`),
  ];
  return `labels ${parts.join(" ")}`;
}

interface KindChange {
  readonly kind: "node" | "job";
  readonly change: AuditChange;
}

/** KIND is csv's: the table says it in its two sections' titles. */
const COLUMNS: readonly Column<KindChange>[] = [
  { header: "KIND", cell: (k) => k.kind },
  { header: "POSITION", cell: (k) => String(k.change.Position), wide: true },
  { header: "TIME", cell: (k) => timeCell(k.change.Time) },
  { header: "ENTITY", cell: (k) => k.change.Entity },
  { header: "CHANGE", cell: (k) => changeCell(k.change) },
  { header: "BY", cell: (k) => k.change.By },
  { header: "REASON", cell: (k) => k.change.Reason },
];

const moment = (text: string, name: string): string => {
  if (/^[0-9]{1,15}$/.test(text) || parseRfc3339(text) !== undefined) return text;
  throw new UsageError(
    `${name} must be an RFC 3339 time with its offset (2026-11-29T10:00:00Z) or a store position, got ${JSON.stringify(text)}`,
    HELP_REF,
  );
};

const said = (m: DiffBody["From"]) =>
  (m.Time === undefined ? "" : `${localTimeOf(m.Time)} `) + `(position ${m.Position})`;

/** `shoal audit diff FROM TO`: GET /api/v1/orchestrator/audit/diff (docs/audit.md, What changed between two moments) */
export async function auditDiffCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal audit diff"));
    return 0;
  }
  if (positionals.length !== 2)
    throw new UsageError("shoal audit diff takes two moments, FROM and TO (times or positions)", HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const q = new URLSearchParams({ from: moment(positionals[0]!, "FROM"), to: moment(positionals[1]!, "TO") });
  const body = await apiClientFrom(values).request<DiffBody>("GET", `/api/v1/orchestrator/audit/diff?${q}`);
  const kinds = (kind: KindChange["kind"], changes: readonly AuditChange[]) =>
    changes.map((change) => ({ kind, change }));
  if (output.format === "json" || output.format === "yaml") {
    await printData(output.format, body);
    return 0;
  }
  const more =
    body.Through < body.To.Position
      ? `More changes than one answer holds: listed up to position ${body.Through}; ` +
        `go on with shoal audit diff ${body.Through} ${body.To.Position}`
      : undefined;
  if (output.format === "csv") {
    const text = renderRows(COLUMNS, [...kinds("node", body.Nodes), ...kinds("job", body.Jobs)], output);
    if (text !== "") printRendered(text);
    if (more) printError(more);
    return 0;
  }
  print(`Changes after ${said(body.From)} up to ${said(body.To)}:`);
  for (const [title, kind, changes] of [
    ["Nodes", "node", body.Nodes],
    ["Jobs", "job", body.Jobs],
  ] as const) {
    print(`\n${title}`);
    if (changes.length === 0) print("(no changes)");
    else printRendered(renderRows(COLUMNS.slice(1), kinds(kind, changes), output));
  }
  if (more) print(`\n${more}`);
  return 0;
}
