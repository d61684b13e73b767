import type { LabelOverrides } from "./node-state.ts";

/**
 * The labels a node has for everything that selects nodes (placement, the list's filter,
 * daemon matching, health-threshold groups): what the node reports, overlaid by the operator's
 * overrides (a null hides the node's label). The same object back when there is no override,
 * so that a node without overrides costs nothing.
 */
export function effectiveLabels(
  reported: Readonly<Record<string, string>>,
  overrides: LabelOverrides,
): Readonly<Record<string, string>> {
  const keys = Object.keys(overrides);
  if (keys.length === 0) return reported;
  const labels: Record<string, string> = { ...reported };
  for (const key of keys) {
    const value = overrides[key];
    if (value === null || value === undefined) delete labels[key];
    else labels[key] = value;
  }
  return labels;
}
