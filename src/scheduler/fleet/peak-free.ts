import type { CapacityLedger } from "../capacity-ledger.ts";
import { weightedFree, type CapacityWeights } from "../node-verdicts.ts";
import type { CandidateNode } from "../placement-request.ts";
import { NO_RESOURCES, type Resources } from "../resources.ts";

/** The best nodes of a ledger base for one set of weights, best first: ids and their weighted free capacity. */
interface Leaders {
  readonly ids: string[];
  readonly values: number[];
}

/** The fewest leaders kept: more than a ledger holds changes before it folds them into a new base (≥ 32, √n). */
const MIN_LEADERS = 64;

/**
 * The highest weighted free capacity among a fleet's available nodes against a ledger: what judge ranks every suitable
 * node against (Bacalhau ranks by free capacity relative to the freest node). Judging only the nodes a job can take,
 * placement still needs it over the whole fleet; this finds it without looking at every node each time.
 *
 * A ledger is a base that stays the same map for many placements plus a few changes (capacity-ledger.ts). For each base
 * and weights the nodes with the most free capacity against the base are found once, in one pass; a placement then
 * weighs the nodes the changes name, and takes the first leader they do not name. Only when the changes name every
 * leader is the fleet walked again. Exact: every value is weightedFree, as judge computes it.
 */
export class PeakFree {
  private byBase = new WeakMap<ReadonlyMap<string, Resources>, Map<string, Leaders>>();

  /** The fleet changed: what was found is stale. */
  reset(): void {
    this.byBase = new WeakMap();
  }

  /** `available`: every node past the gate, and `nodeOf` finds one by id (undefined: gone or not available). */
  peak(
    weights: CapacityWeights,
    ledger: CapacityLedger,
    available: () => Iterable<CandidateNode>,
    availableCount: number,
    nodeOf: (id: string) => CandidateNode | undefined,
  ): number {
    const base = ledger.sharedBase;
    const changes = ledger.recentChanges;
    let byWeights = this.byBase.get(base);
    if (byWeights === undefined) this.byBase.set(base, (byWeights = new Map()));
    const key = `${weights[0]},${weights[1]},${weights[2]},${weights[3]}`;
    let leaders = byWeights.get(key);
    if (leaders === undefined) byWeights.set(key, (leaders = leadersOf(base, weights, available())));
    let best = 0;
    for (const [id, held] of changes) {
      const node = nodeOf(id);
      if (node === undefined) continue;
      const w = weightedFree(node.capacity, held ?? NO_RESOURCES, weights);
      if (w > best) best = w;
    }
    for (let i = 0; i < leaders.ids.length; i++) {
      if (changes.has(leaders.ids[i] as string)) continue;
      const w = leaders.values[i] as number;
      return w > best ? w : best;
    }
    // Every leader changed: the best of the rest is unknown here.
    if (leaders.ids.length === availableCount) return best;
    for (const node of available()) {
      const w = weightedFree(node.capacity, ledger.held(node.id), weights);
      if (w > best) best = w;
    }
    return best;
  }
}

function leadersOf(
  base: ReadonlyMap<string, Resources>,
  weights: CapacityWeights,
  nodes: Iterable<CandidateNode>,
): Leaders {
  const limit = Math.max(MIN_LEADERS, 2 * Math.ceil(Math.sqrt(base.size)));
  const ids: string[] = [];
  const values: number[] = [];
  for (const node of nodes) {
    const w = weightedFree(node.capacity, base.get(node.id) ?? NO_RESOURCES, weights);
    if (ids.length >= limit && w <= (values[values.length - 1] as number)) continue;
    let at = values.length;
    while (at > 0 && (values[at - 1] as number) < w) at--;
    ids.splice(at, 0, node.id);
    values.splice(at, 0, w);
    if (ids.length > limit) {
      ids.pop();
      values.pop();
    }
  }
  return { ids, values };
}
