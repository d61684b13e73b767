import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

export async function auditCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "verify") return (await import("./audit-verify-command.ts")).auditVerifyCommand(rest);
  if (sub === "diff") return (await import("./audit-diff-command.ts")).auditDiffCommand(rest);
  if (sub === "membership") return (await import("./audit-membership-command.ts")).auditMembershipCommand(rest);
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(commandHelp("shoal audit"));
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(`shoal audit: unknown command "${sub}"`, "shoal audit --help");
}
