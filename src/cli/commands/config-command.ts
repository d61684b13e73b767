import { CONFIG_KEYS, configValueText, type ConfigKey } from "../../config/keys.ts";
import { loadTracedConfig } from "../../config/load-config.ts";
import { redactedConfig } from "../../config/redacted-config.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { outputFormat, print, printData } from "../output-format.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { formatTable } from "../table.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal config list --help";

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const;

function configList(args: string[]): number | Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal config list"));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError("shoal config list takes no arguments", HELP_REF);
  const format = outputFormat(values.output, "table", HELP_REF);
  const { config, origins } = loadTracedConfig({
    files: values.config ?? [],
    settings: values.c ?? [],
    env: process.env,
  });
  const shown = redactedConfig(config);
  const rows = (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => ({
    Key: key,
    Value: configValueText(key, shown[key]),
    Source: origins[key],
  }));
  if (format !== "table") return printData(format, rows).then(() => 0);
  // The value last: a long one (a list, API.Auth.Users) does not push the other columns away.
  print(
    formatTable(
      ["KEY", "SOURCE", "VALUE"],
      rows.map((r) => [r.Key, r.Source, r.Value]),
    ),
  );
  return 0;
}

export async function configCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "list") return configList(rest);
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(commandHelp("shoal config"));
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(`shoal config: unknown command "${sub}"`, "shoal config --help");
}
