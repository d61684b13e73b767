import type { NodeMembershipAudit } from "../../projections/audit-membership/membership-ledger.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { API_OPTIONS_HELP, JOB_COMMON_OPTIONS } from "../job-options.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { localTimeOf, timeCell, type Column } from "../column.ts";
import { print } from "../output-format.ts";
import { OUTPUT_OPTIONS, outputHelp, outputOptions } from "../output-options.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { UsageError } from "../usage-error.ts";

const HELP_REF = "shoal audit membership --help";

export const AUDIT_MEMBERSHIP_HELP = `Usage: shoal audit membership [options]

Per node, from the stored events alone: when it joined (its first join request), its membership at
the end of the window and who made the latest change and why, and how long it was HEALTHY,
UNHEALTHY and UNKNOWN inside the window (docs/audit.md, Membership over a window).

Options:
  --since T                start of the window, RFC 3339 with an offset (default: the first event)
  --until T                end of the window, not later than now (default: now)
  --node ID                a node's id or a unique prefix; may repeat (default: every node
                           registered at some moment of the window)
  --limit N                nodes per page when no --node is given (default 100, at most 1000)
  --next-token T           the page after the one that printed T
${outputHelp(`table (default): NODE JOINED MEMBERSHIP BY REASON HEALTHY UNHEALTHY UNKNOWN, under
                           the window (wide: with the number of membership changes); csv the same rows;
                           json and yaml print the API's answer, with every change`)}

${API_OPTIONS_HELP}`;

export const OPTIONS = {
  ...JOB_COMMON_OPTIONS,
  ...OUTPUT_OPTIONS,
  since: { type: "string" },
  until: { type: "string" },
  node: { type: "string", multiple: true },
  limit: { type: "string" },
  "next-token": { type: "string" },
} as const;

/** A duration as Go prints one (1h2m3.5s, 250ms, 0s): the shape Bacalhau's CLI users read. */
export function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = ((ms % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, "");
  return `${h > 0 ? `${h}h` : ""}${h > 0 || m > 0 ? `${m}m` : ""}${s}s`;
}

export const MEMBERSHIP_COLUMNS: readonly Column<NodeMembershipAudit>[] = [
  { header: "NODE", cell: (n) => n.NodeID },
  { header: "JOINED", cell: (n) => timeCell(n.Joined) },
  { header: "MEMBERSHIP", cell: (n) => n.Membership ?? "-" },
  { header: "BY", cell: (n) => (n.By === "" ? "-" : n.By) },
  { header: "REASON", cell: (n) => n.Reason },
  { header: "HEALTHY", cell: (n) => goDuration(n.HealthyMs) },
  { header: "UNHEALTHY", cell: (n) => goDuration(n.UnhealthyMs) },
  { header: "UNKNOWN", cell: (n) => goDuration(n.UnknownMs) },
  { header: "CHANGES", cell: (n) => String(n.Changes.length), wide: true },
];

interface MembershipPage {
  readonly Since: string;
  readonly Until: string;
  readonly Items: NodeMembershipAudit[];
  readonly NextToken: string;
}

/** `shoal audit membership`: GET /api/v1/orchestrator/audit/membership; the server names a wrong parameter. */
export async function auditMembershipCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(AUDIT_MEMBERSHIP_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(
      `shoal audit membership takes no arguments (name nodes with --node ${positionals[0]})`,
      HELP_REF,
    );
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const q = new URLSearchParams();
  if (values.since !== undefined) q.set("since", values.since);
  if (values.until !== undefined) q.set("until", values.until);
  for (const node of values.node ?? []) q.append("node", node);
  if (values.limit !== undefined) q.set("limit", String(wholeNumberFlag(values.limit, "--limit", 1, 1000, HELP_REF)));
  if (values["next-token"] !== undefined) q.set("next_token", values["next-token"]);
  const res = await apiClientFrom(values).request<MembershipPage>("GET", `/api/v1/orchestrator/audit/membership?${q}`);
  if (output.format === "table") print(`From ${localTimeOf(res.Since)} to ${localTimeOf(res.Until)}:`);
  const more = res.NextToken ? `More nodes: the same options and --next-token ${res.NextToken}` : undefined;
  await printPage(output, MEMBERSHIP_COLUMNS, res.Items, more, res);
  return 0;
}
