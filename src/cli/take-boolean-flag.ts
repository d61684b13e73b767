import { UsageError } from "./usage-error.ts";

const VALUES: Readonly<Record<string, boolean>> = { true: true, false: false };

/**
 * A boolean flag that may be given a value, as Bacalhau's (pflag's) `--wait=false` is: `--NAME`, `--NAME=true|false`
 * or `--NAME true|false`, the last one given winning. parseArgs knows only `--NAME`, so the flag is taken out of the
 * arguments here (up to a `--`, after which everything is a positional) and the rest are parsed as before.
 */
export function takeBooleanFlag(
  args: readonly string[],
  name: string,
  help: string,
): { readonly args: string[]; readonly value: boolean | undefined } {
  const rest: string[] = [];
  let value: boolean | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") {
      rest.push(...args.slice(i));
      break;
    }
    if (arg === `--${name}`) {
      const next = args[i + 1];
      if (next !== undefined && Object.hasOwn(VALUES, next)) {
        value = VALUES[next];
        i++;
      } else value = true;
    } else if (arg.startsWith(`--${name}=`)) {
      const text = arg.slice(name.length + 3);
      if (!Object.hasOwn(VALUES, text))
        throw new UsageError(`--${name} takes true or false, got ${JSON.stringify(text)}`, help);
      value = VALUES[text];
    } else rest.push(arg);
  }
  return { args: rest, value };
}
