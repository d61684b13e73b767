import { ShoalError, notFound } from "../errors/shoal-error.ts";

const SHOWN_MATCHES = 3;

/** Exact id wins; otherwise a prefix must match exactly one id (Bacalhau's in-memory store rule). */
export function resolveNodeId(idOrPrefix: string, ids: Iterable<string>): string {
  const all = [...ids];
  if (all.includes(idOrPrefix)) return idOrPrefix;
  const matches = idOrPrefix === "" ? [] : all.filter((id) => id.startsWith(idOrPrefix)).sort();
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) throw notFound(`node not found: ${idOrPrefix}`);
  const shown = matches.slice(0, SHOWN_MATCHES).join(", ") + (matches.length > SHOWN_MATCHES ? ", ..." : "");
  throw new ShoalError({
    kind: "MultipleNodesFound",
    message: `multiple nodes found for prefix: ${idOrPrefix}, matching IDs: [${shown}]`,
    hint: "Use a more specific node ID prefix",
    details: { matches },
  });
}
