import { ambiguous, shown } from "./job-lookup.ts";

/**
 * The one of a job's executions `idOrPrefix` names: its full id, else a unique prefix of it, such as the short form
 * `e-1a2b3c4d` the CLIs print (as a job's short id names its job). Undefined when none matches; a prefix several share
 * is refused, listing them, never resolved to one of them.
 */
export function executionByIdOrPrefix<E extends { readonly executionId: string }>(
  executions: readonly E[],
  idOrPrefix: string,
): E | undefined {
  const exact = executions.find((e) => e.executionId === idOrPrefix);
  if (exact !== undefined) return exact;
  const matches = executions.filter((e) => e.executionId.startsWith(idOrPrefix));
  if (matches.length > 1) {
    const ids = matches.map((e) => e.executionId).sort();
    throw ambiguous(
      `multiple executions found for ID prefix ${idOrPrefix}: [${shown(ids)}]`,
      ids,
      "Use the full execution ID",
    );
  }
  return matches[0];
}
