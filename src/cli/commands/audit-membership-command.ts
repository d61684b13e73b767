import type { NodeMembershipAudit } from "../../projections/audit-membership/membership-ledger.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { localTimeOf, timeCell, type Column } from "../column.ts";
import { print } from "../output-format.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printPage } from "../print-page.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal audit membership --help";

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
    console.log(commandHelp("shoal audit membership"));
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
