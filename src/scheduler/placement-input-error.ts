import { FleetView, listOf } from "./fleet/fleet-view.ts";
import type { CandidateNode, PlacementRequest } from "./placement-request.ts";
import type { Resources } from "./resources.ts";

/**
 * A placement request that job spec validation should have refused (a malformed constraint, a
 * negative Count, a fraction of a byte): placement decides nothing on it. The caller maps it to
 * a BadRequest if it came from a user, else to Internal.
 */
export class PlacementInputError extends Error {
  override readonly name = "PlacementInputError";
}

const wholeNumber = (n: number) => Number.isSafeInteger(n) && n >= 0;

const RESOURCE_KEYS = ["cpuMillis", "memoryBytes", "diskBytes", "gpus"] as const;

function resourcesProblem(what: string, r: Resources): string | undefined {
  // Checked once per node per placement: no entries array.
  if (wholeNumber(r.cpuMillis) && wholeNumber(r.memoryBytes) && wholeNumber(r.diskBytes) && wholeNumber(r.gpus))
    return undefined;
  const key = RESOURCE_KEYS.find((k) => !wholeNumber(r[k])) as (typeof RESOURCE_KEYS)[number];
  return `${what}: ${key} must be a whole number ≥ 0, not ${r[key]}`;
}

/** What is wrong with the request's numbers, or undefined (constraints are checked by jobSelectors). */
export function placementRequestProblem(request: PlacementRequest): string | undefined {
  if ((request.type === "batch" || request.type === "service") && !wholeNumber(request.count)) {
    return `Count must be a whole number ≥ 0, not ${request.count}`;
  }
  if (request.maxRetries !== undefined && !wholeNumber(request.maxRetries))
    return `maxRetries must be a whole number ≥ 0, not ${request.maxRetries}`;
  const problem = resourcesProblem("job resources", request.resources);
  if (problem) return problem;
  // A fleet counts its nodes' problems as they change: its list is read only when it has some.
  const nodes = request.nodes instanceof FleetView && request.nodes.problems === 0 ? [] : listOf(request.nodes);
  for (const n of nodes) {
    const p = candidateProblem(n);
    if (p) return p;
  }
  return undefined;
}

/** What is wrong with a node's numbers, or undefined. */
export function candidateProblem(n: CandidateNode): string | undefined {
  return (
    resourcesProblem(`node ${n.id} capacity`, n.capacity) ??
    (n.maxJobRequirements && resourcesProblem(`node ${n.id} MaxJobRequirements`, n.maxJobRequirements))
  );
}
