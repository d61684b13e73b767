import { parseRfc3339 } from "../../api/events/rfc3339-time.ts";
import type { AuditChange } from "../../projections/audit-diff/audit-change.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
import { outputFormat, print, printData } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { formatTable } from "../table.ts";
import { UsageError } from "../usage-error.ts";

const HELP_REF = "shoal audit diff --help";

export const AUDIT_DIFF_HELP = `Usage: shoal audit diff FROM TO [--output table|json|yaml]

What changed in the cluster between two moments: nodes that joined or were deleted, approved or
rejected, cordoned or uncordoned, relabelled, drained; jobs submitted, completed, failed or
stopped; each with when, who and why. FROM and TO are RFC 3339 times with an offset
(2026-11-29T10:00:00Z) or store positions. A change undone inside the window is listed, and so
is its undoing, in the order they happened.

Options:
  --output table|json|yaml table (default): the node changes, then the job changes, one line each
                           (TIME ENTITY CHANGE BY REASON); json and yaml print the API's answer

${API_OPTIONS_HELP}`;

const OPTIONS = { ...JOB_COMMON_OPTIONS } as const;

interface DiffBody {
  readonly From: { readonly Position: number; readonly Time?: string };
  readonly To: { readonly Position: number; readonly Time?: string };
  readonly Through: number;
  readonly Nodes: AuditChange[];
  readonly Jobs: AuditChange[];
}

const COLUMNS = ["TIME", "ENTITY", "CHANGE", "BY", "REASON"] as const;

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

const row = (c: AuditChange): string[] => [c.Time, c.Entity, changeCell(c), c.By, c.Reason];

const moment = (text: string, name: string): string => {
  if (/^[0-9]{1,15}$/.test(text) || parseRfc3339(text) !== undefined) return text;
  throw new UsageError(
    `${name} must be an RFC 3339 time with its offset (2026-11-29T10:00:00Z) or a store position, got ${JSON.stringify(text)}`,
    HELP_REF,
  );
};

const said = (m: DiffBody["From"]) => (m.Time === undefined ? "" : `${m.Time} `) + `(position ${m.Position})`;

/** `shoal audit diff FROM TO`: GET /api/v1/orchestrator/audit/diff (docs/audit.md, What changed between two moments) */
export async function auditDiffCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(AUDIT_DIFF_HELP);
    return 0;
  }
  if (positionals.length !== 2)
    throw new UsageError("shoal audit diff takes two moments, FROM and TO (times or positions)", HELP_REF);
  const format = outputFormat(values.output, "table", HELP_REF);
  const q = new URLSearchParams({ from: moment(positionals[0]!, "FROM"), to: moment(positionals[1]!, "TO") });
  const body = await apiClientFrom(values).request<DiffBody>("GET", `/api/v1/orchestrator/audit/diff?${q}`);
  if (format !== "table") {
    await printData(format, body);
    return 0;
  }
  print(`Changes after ${said(body.From)} up to ${said(body.To)}:`);
  print(`\nNodes\n${body.Nodes.length === 0 ? "(no changes)" : formatTable(COLUMNS, body.Nodes.map(row))}`);
  print(`\nJobs\n${body.Jobs.length === 0 ? "(no changes)" : formatTable(COLUMNS, body.Jobs.map(row))}`);
  if (body.Through < body.To.Position)
    print(
      `\nMore changes than one answer holds: listed up to position ${body.Through}; go on with shoal audit diff ${body.Through} ${body.To.Position}`,
    );
  return 0;
}
