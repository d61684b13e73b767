import type { CapacityLedger } from "../capacity-ledger.ts";
import { weighFree, weightedFree, type CapacityWeights } from "../node-verdicts.ts";
import type { CandidateNode } from "../placement-request.ts";
import { NO_RESOURCES, type Resources } from "../resources.ts";

/** Per resource, four numbers a node: CPU, memory, disk, GPUs. */
export const WIDTH = 4;

/**
 * The fewest leaders kept per base and weights: room for a placement's walk down the freest nodes, and more than the
 * changes a ledger holds before it folds them into a new base (32, or √n).
 */
const MIN_LEADERS = 64;

/** Available nodes best first by weighted free capacity, and the most any other has (−1: none is left). */
export interface Leading {
  readonly nodes: readonly CandidateNode[];
  readonly values: readonly number[];
  readonly rest: number;
}

interface Weighed {
  readonly node: CandidateNode;
  readonly w: number;
}

/** What every available node has free against one ledger base, and the leaders found in it per weights. */
interface BaseFree {
  /** WIDTH numbers per available node, in the order of `nodes`. */
  readonly free: Float64Array;
  /** The nodes with the most weighted free capacity, best first, as indexes into `nodes`, per weights. */
  readonly leaders: Map<string, Int32Array>;
}

/**
 * The highest weighted free capacity among a fleet's available nodes against a ledger: what judge ranks every suitable
 * node against (Bacalhau ranks by free capacity relative to the freest node). Judging only the nodes a job can take,
 * placement still needs it over the whole fleet; this finds it without looking at every node each time.
 *
 * A ledger is a base that stays the same map for many placements plus a few changes (capacity-ledger.ts). For each base
 * what every available node has free is read once; for each weights the nodes with the most of it are found in one pass
 * over those numbers. A placement then weighs the nodes the changes name, and merges them with the leaders they do not
 * name: the freest nodes now, best first (`leading`), the first of them the peak. Only when the changes name every
 * leader are the nodes walked again. Exact: every value is weighFree's, as judge's.
 */
export class PeakFree {
  private byBase = new WeakMap<ReadonlyMap<string, Resources>, BaseFree>();

  /** `nodes`: every available node (the same array until the fleet changes, when `reset` is called). */
  constructor(private nodes: readonly CandidateNode[] = []) {}

  /** The fleet changed: these are its available nodes now; what was found is stale. */
  reset(nodes: readonly CandidateNode[]): void {
    this.nodes = nodes;
    this.byBase = new WeakMap();
    this.last = undefined;
  }

  /** `nodeOf` finds an available node by id (undefined: gone or not available). */
  peak(weights: CapacityWeights, ledger: CapacityLedger, nodeOf: (id: string) => CandidateNode | undefined): number {
    const first = this.leading(weights, ledger, nodeOf, 1);
    if (first !== undefined) return Math.max(0, first.values[0] ?? 0);
    let best = 0;
    for (const node of this.nodes) {
      const w = weightedFree(node.capacity, ledger.held(node.id), weights);
      if (w > best) best = w;
    }
    return best;
  }

  /**
   * The available nodes with the most weighted free capacity against the ledger, best first, at most `limit` of them,
   * and the most any other available node has; undefined when the leaders found for the ledger's base run out first.
   */
  leading(
    weights: CapacityWeights,
    ledger: CapacityLedger,
    nodeOf: (id: string) => CandidateNode | undefined,
    limit: number,
  ): Leading | undefined {
    const base = ledger.sharedBase;
    const changes = ledger.recentChanges;
    let found = this.byBase.get(base);
    if (found === undefined) this.byBase.set(base, (found = { free: this.freeOf(base), leaders: new Map() }));
    const key = `${weights[0]},${weights[1]},${weights[2]},${weights[3]}`;
    let leaders = found.leaders.get(key);
    if (leaders === undefined) found.leaders.set(key, (leaders = leadersOf(found.free, weights, changes.size)));
    const changed = this.changedOf(weights, key, ledger, nodeOf);
    const free = found.free;
    const weigh = (at: number): number => {
      const o = at * WIDTH;
      return weighFree(free[o] as number, free[o + 1] as number, free[o + 2] as number, free[o + 3] as number, weights);
    };
    const all = this.nodes;
    let l = 0;
    const nextLeader = (): number => {
      while (l < leaders.length && changes.has((all[leaders[l] as number] as CandidateNode).id)) l++;
      return l < leaders.length ? (leaders[l] as number) : -1;
    };
    // Below the last leader are only nodes the base weighs no higher than it.
    const truncated = leaders.length < all.length;
    const floor = truncated ? weigh(leaders[leaders.length - 1] as number) : -1;
    const nodes: CandidateNode[] = [];
    const values: number[] = [];
    let c = 0;
    while (nodes.length < limit) {
      const leader = nextLeader();
      if (leader < 0 && truncated) return undefined;
      const lw = leader < 0 ? -1 : weigh(leader);
      const cw = c < changed.length ? (changed[c] as { w: number }).w : -1;
      if (lw < 0 && cw < 0) break;
      if (cw >= lw) {
        nodes.push((changed[c++] as { node: CandidateNode }).node);
        values.push(cw);
      } else {
        nodes.push(all[leader] as CandidateNode);
        values.push(lw);
        l++;
      }
    }
    const leader = nextLeader();
    const rest = Math.max(
      c < changed.length ? (changed[c] as { w: number }).w : -1,
      leader < 0 ? floor : weigh(leader),
    );
    return { nodes, values, rest };
  }

  /** One placement asks several times with one ledger: its changed nodes are weighed and sorted once. */
  private last: { ledger: CapacityLedger; key: string; changed: Weighed[] } | undefined;

  /** The nodes the ledger's changes name, which hold other than the base says: weighed as they are now, best first. */
  private changedOf(
    weights: CapacityWeights,
    key: string,
    ledger: CapacityLedger,
    nodeOf: (id: string) => CandidateNode | undefined,
  ): Weighed[] {
    if (this.last?.ledger === ledger && this.last.key === key) return this.last.changed;
    const changed: Weighed[] = [];
    for (const [id, held] of ledger.recentChanges) {
      const node = nodeOf(id);
      if (node !== undefined) changed.push({ node, w: weightedFree(node.capacity, held ?? NO_RESOURCES, weights) });
    }
    if (changed.length > 1) changed.sort((a, b) => b.w - a.w);
    this.last = { ledger, key, changed };
    return changed;
  }

  /** What every available node has free against this base, WIDTH numbers each, in the order of the nodes given. */
  freeAgainst(base: ReadonlyMap<string, Resources>): Float64Array {
    let found = this.byBase.get(base);
    if (found === undefined) this.byBase.set(base, (found = { free: this.freeOf(base), leaders: new Map() }));
    return found.free;
  }

  private freeOf(base: ReadonlyMap<string, Resources>): Float64Array {
    const free = new Float64Array(this.nodes.length * WIDTH);
    this.nodes.forEach((node, i) => {
      const cap = node.capacity;
      const held = base.get(node.id) ?? NO_RESOURCES;
      const o = i * WIDTH;
      free[o] = Math.max(0, cap.cpuMillis - held.cpuMillis);
      free[o + 1] = Math.max(0, cap.memoryBytes - held.memoryBytes);
      free[o + 2] = Math.max(0, cap.diskBytes - held.diskBytes);
      free[o + 3] = Math.max(0, cap.gpus - held.gpus);
    });
    return free;
  }
}

/** The best nodes by weighted free capacity, more than the changes a ledger of this base holds before it folds. */
function leadersOf(free: Float64Array, weights: CapacityWeights, changes: number): Int32Array {
  const n = free.length / WIDTH;
  const limit = Math.min(n, Math.max(MIN_LEADERS, 4 * Math.ceil(Math.sqrt(n)), 2 * changes));
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * WIDTH;
    values[i] = weighFree(
      free[o] as number,
      free[o + 1] as number,
      free[o + 2] as number,
      free[o + 3] as number,
      weights,
    );
  }
  if (limit === 0) return new Int32Array(0);
  // The limit-th largest value, by selection on a copy (O(n)); then only the nodes at or above it are sorted.
  const threshold = selectDescending(values.slice(), limit - 1);
  const at = new Int32Array(limit);
  let size = 0;
  for (let i = 0; i < n && size < limit; i++) if ((values[i] as number) > threshold) at[size++] = i;
  for (let i = 0; i < n && size < limit; i++) if (values[i] === threshold) at[size++] = i;
  return at.sort((a, b) => (values[b] as number) - (values[a] as number));
}

/** weighFree of the node at `at` in a free array. */
export function weighAt(free: Float64Array, at: number, weights: CapacityWeights): number {
  const o = at * WIDTH;
  return weighFree(free[o] as number, free[o + 1] as number, free[o + 2] as number, free[o + 3] as number, weights);
}

/** The value that would be at `k` (0-based) were `values` sorted largest first; `values` is reordered. */
export function selectDescending(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) > pivot) i++;
      while ((values[j] as number) < pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i++] = values[j] as number;
        values[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return values[k] as number;
  }
  return values[k] as number;
}
