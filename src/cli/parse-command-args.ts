import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage-error.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * `parseArgs` (strict, positionals allowed) whose refusals are usage errors pointing at the
 * command's own help: `Unknown option '--bogus'` alone does not say where the right ones are.
 */
export function parseCommandArgs<const O extends Options>(args: string[], options: O, help: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) throw new UsageError((e as Error).message, help);
    throw e;
  }
}
