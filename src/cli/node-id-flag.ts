import { nodeIdProblem } from "../events/catalog/node-id.ts";
import { UsageError } from "./usage-error.ts";

/** `--node-id` (serve, compute), checked by the protocol's rule here so that a bad one is a usage error naming it. */
export function nodeIdFlag(value: string | undefined, help: string): string | undefined {
  const problem = value === undefined ? undefined : nodeIdProblem(value);
  if (problem !== undefined) throw new UsageError(`--node-id: ${problem}`, help);
  return value;
}
