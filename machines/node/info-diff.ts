import type { NodeInfo } from "../../src/events/catalog/node-info.ts";
import { canonicalJson } from "../canonical-json.ts";

/** Canonical JSON: sorted keys, and lists compared as sets (engine order is not a change). */
const canonical = (value: unknown): string => canonicalJson(value, "sets");

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
