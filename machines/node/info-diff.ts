import type { NodeInfo } from "../../src/events/catalog/node-info.ts";

/** Canonical JSON: sorted keys, and lists compared as sets (engine order is not a change). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).sort().join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Top-level NodeInfo fields whose content differs; empty when the report changes nothing. */
export function changedInfoFields(before: NodeInfo, after: NodeInfo): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof NodeInfo>;
  return [...keys].filter((k) => canonical(before[k]) !== canonical(after[k])).sort();
}

/**
 * The whole info in the canonical form the comparison above uses field by field: two infos have
 * equal forms exactly when `changedInfoFields` finds nothing changed between them (the form is
 * canonical JSON, so equal strings mean equal keys with equal canonical values). What a host
 * keeps to recognise an unchanged report without the node's state at hand.
 */
export function canonicalInfo(info: NodeInfo): string {
  return canonical(info);
}
