import { parseArgs } from "node:util";
import { writeNatsOperatorFiles } from "../../orchestrator/nats-operator-files.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  ...CONFIG_OPTIONS,
  dir: { type: "string" },
  "resolver-dir": { type: "string" },
  "conf-out": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function natsOperatorCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal nats-operator"));
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`shoal nats-operator: unexpected ${JSON.stringify(positionals.join(" "))}`);
  if (values.dir === undefined || values.dir === "") throw new UsageError("shoal nats-operator: --dir DIR is required");
  const resolverDir = values["resolver-dir"] ?? "jwt";
  if (resolverDir === "" || /[\0\n\r]/.test(resolverDir))
    throw new UsageError(`--resolver-dir: a directory path, got ${JSON.stringify(resolverDir)}`);
  if (values["conf-out"] === "") throw new UsageError("--conf-out: a file path, got an empty one");
  const config = configFrom(values);
  const files = writeNatsOperatorFiles(config, values.dir, resolverDir, values["conf-out"]);
  console.log(
    [
      `Wrote ${files.configFile}; the operator keys are in ${files.keysDir}.`,
      ...(files.dirModeWas === undefined
        ? []
        : [`${files.keysDir} was ${files.dirModeWas.toString(8).padStart(4, "0")}: made 0700 (it holds secrets).`]),
      `On every NATS server: include ${files.configFile} in its configuration (no other accounts or users), ` +
        "and restart it.",
      `On every orchestrator: a copy of ${files.keysDir} (0700, its files 0600) as Orchestrator.NATS.OperatorDir, ` +
        (files.tokenFile === undefined
          ? `and this Orchestrator.Auth.Token (account ${files.account}).`
          : `and the join token generated in ${files.tokenFile} as Orchestrator.Auth.Token ` +
            `(account ${files.account}).`),
    ].join("\n"),
  );
  return 0;
}
