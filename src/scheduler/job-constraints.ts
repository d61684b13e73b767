import { parseInt64, type LabelSelector, type Requirement } from "../labels/label-selector.ts";
import { PlacementInputError } from "./placement-input-error.ts";
import type { ConstraintRequirement } from "./placement-request.ts";

/**
 * Bacalhau's "favour_" key prefix: such a constraint prefers the nodes that match it instead of
 * excluding the others [pkg/orchestrator/selection/ranking/labels.go].
 */
export const FAVOUR_PREFIX = "favour_";

/** A job's constraints as the shared label matcher (src/labels/) takes them. */
export interface JobSelectors {
  /** Every node must match these. */
  readonly required: LabelSelector;
  /** Matching nodes that also match these rank higher. */
  readonly favoured: LabelSelector;
}

/** Why this requirement cannot be matched (Kubernetes' NewRequirement rules), or undefined. */
export function constraintProblem(c: ConstraintRequirement): string | undefined {
  const what = `constraint ${JSON.stringify(formatConstraint(c))}`;
  if (c.key.trim() === "") return `${what}: the key is empty`;
  switch (c.operator) {
    case "in":
    case "notin":
      return c.values.length === 0 ? `${what}: ${c.operator} needs at least one value` : undefined;
    case "exists":
    case "!":
      return c.values.length !== 0 ? `${what}: ${c.operator} takes no values` : undefined;
    case "=":
    case "==":
    case "!=":
      return c.values.length !== 1 ? `${what}: ${c.operator} takes exactly one value` : undefined;
    case "gt":
    case "lt":
      if (c.values.length !== 1) return `${what}: ${c.operator} takes exactly one value`;
      return parseInt64(c.values[0] as string) === undefined
        ? `${what}: ${c.operator} needs an integer value`
        : undefined;
    default:
      return `${what}: unknown operator ${JSON.stringify(c.operator)} (one of =, ==, !=, in, notin, exists, !, gt, lt)`;
  }
}

function toRequirement(c: ConstraintRequirement, key: string): Requirement {
  const problem =
    constraintProblem(c) ??
    (key === "" ? `constraint ${JSON.stringify(formatConstraint(c))}: the key is empty` : undefined);
  if (problem !== undefined) throw new PlacementInputError(problem);
  switch (c.operator) {
    case "=":
    case "==":
    case "in":
      return { key, op: "in", values: c.values };
    case "!=":
    case "notin":
      return { key, op: "notin", values: c.values };
    case "exists":
      return { key, op: "exists" };
    case "!":
      return { key, op: "doesnotexist" };
    default:
      return { key, op: c.operator === "gt" ? "gt" : "lt", value: parseInt64(c.values[0] as string) as bigint };
  }
}

/** The selectors of a job's constraints; throws PlacementInputError naming the first bad one. */
export function jobSelectors(constraints: readonly ConstraintRequirement[]): JobSelectors {
  const required: Requirement[] = [];
  const favoured: Requirement[] = [];
  for (const c of constraints) {
    if (c.key.startsWith(FAVOUR_PREFIX)) favoured.push(toRequirement(c, c.key.slice(FAVOUR_PREFIX.length)));
    else required.push(toRequirement(c, c.key));
  }
  return { required: { requirements: required, text: "" }, favoured: { requirements: favoured, text: "" } };
}

/** Bacalhau's LabelSelectorRequirement.String(): "key op v1|v2" ("gpu exists " keeps its space). */
export function formatConstraint(c: ConstraintRequirement): string {
  return `${c.key} ${c.operator} ${c.values.join("|")}`;
}

/** A job's constraints as Go prints the slice: "[zone = a tier in gpu|cpu]". */
export function formatConstraints(constraints: readonly ConstraintRequirement[]): string {
  return `[${constraints.map(formatConstraint).join(" ")}]`;
}

/** Labels as Go prints a map: keys sorted, "map[Architecture:amd64 zone:a]". */
export function formatLabels(labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[${keys.map((k) => `${k}:${labels[k]}`).join(" ")}]`;
}
