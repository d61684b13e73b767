import { CONFIG_KEYS, configValueText, type ConfigKey } from "../../config/keys.ts";
import { redactedConfig } from "../../config/redacted-config.ts";
import type { Column } from "../column.ts";
import { CONFIG_OPTIONS, tracedConfigFrom } from "../config-flags.ts";
import { print, printData } from "../output-format.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { renderRows } from "../render-rows.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal config list --help";

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...OUTPUT_OPTIONS,
  help: { type: "boolean", short: "h" },
} as const;

interface ConfigRow {
  readonly Key: ConfigKey;
  readonly Value: string;
  readonly Source: string;
}

// The value last: a long one (a list, API.Auth.Users) does not push the other columns away.
const COLUMNS: readonly Column<ConfigRow>[] = [
  { header: "KEY", cell: (r) => r.Key },
  { header: "SOURCE", cell: (r) => r.Source },
  { header: "VALUE", cell: (r) => r.Value },
];

function configList(args: string[]): number | Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal config list"));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError("shoal config list takes no arguments", HELP_REF);
  const output = outputOptions(values, { fallback: "table", help: HELP_REF });
  const { config, origins } = tracedConfigFrom(values);
  const shown = redactedConfig(config);
  const rows: ConfigRow[] = (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => ({
    Key: key,
    Value: configValueText(key, shown[key]),
    Source: origins[key],
  }));
  if (output.format === "json" || output.format === "yaml") return printData(output.format, rows).then(() => 0);
  print(renderRows(COLUMNS, rows, output));
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
