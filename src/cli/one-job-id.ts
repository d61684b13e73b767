import { UsageError } from "./usage-error.ts";

/** The one job id a `shoal job <command>` takes; none or more is a usage error. */
export function oneJobId(positionals: readonly string[], command: string, helpRef?: string): string {
  const [id] = positionals;
  if (id === undefined || positionals.length !== 1)
    throw new UsageError(`shoal job ${command} takes exactly one job id`, helpRef);
  return id;
}
