import { UsageError } from "../usage-error.ts";

export const AUDIT_HELP = `Usage: shoal audit <command> [options]

Commands:
  diff        what changed in the cluster between two moments: nodes and jobs, with who and why
  verify      walk the event log's hash chain and its signed checkpoints; report the first break
  membership  per node: when it joined, who approved or rejected it and why, its health time in a window

Run 'shoal audit <command> --help' for its options (docs/audit.md).`;

export async function auditCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "verify") return (await import("./audit-verify-command.ts")).auditVerifyCommand(rest);
  if (sub === "diff") return (await import("./audit-diff-command.ts")).auditDiffCommand(rest);
  if (sub === "membership") return (await import("./audit-membership-command.ts")).auditMembershipCommand(rest);
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(AUDIT_HELP);
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(`shoal audit: unknown command "${sub}"`, "shoal audit --help");
}
