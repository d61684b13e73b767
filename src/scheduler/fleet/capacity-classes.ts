import type { CapacityLedger } from "../capacity-ledger.ts";
import { weighFree, weightedFree, type CapacityWeights } from "../node-verdicts.ts";
import type { CandidateNode } from "../placement-request.ts";
import { NO_RESOURCES, type Resources } from "../resources.ts";
import { WIDTH } from "./peak-free.ts";

/** judge's capacity ranks run from 0 to this (Bacalhau's available-capacity ranker). */
const MAX_CAPACITY_RANK = 100;

/** The available nodes against one ledger base, in classes of nodes with the very same free capacity. */
interface Classes {
  /** WIDTH numbers per class: what each of its nodes has free. */
  readonly free: Float64Array;
  /** Each class's nodes, as indexes into the available nodes: ascending, so by id. */
  readonly members: readonly Int32Array[];
}

/** Available nodes in judge's order for one job; `next` gives each one's index, −1 after the last. */
export interface RankOrder {
  next(): number;
}

/**
 * The available nodes grouped by what they have free against a ledger's base: nodes with the same free capacity weigh
 * the same for every job, so they get the same capacity rank, and among them judge goes by id. A placement whose ranks
 * differ only by free capacity weighs each class once (not each node), and reads the nodes of the best ranks in id
 * order, lowest first, as far as it needs: among thousands of identical nodes it reads a few, not all of them.
 *
 * Like PeakFree, built once per ledger base (one pass over the free numbers PeakFree read) and corrected per placement
 * by the ledger's few changes: a node they name is left out of its class and weighed on its own as it is now.
 */
export class CapacityClasses {
  /** Per base its classes, or how many were found before a count was cut short (`fewerThan`). */
  private byBase = new WeakMap<ReadonlyMap<string, Resources>, Classes | number>();

  /** `nodes`: every available node, by id (the same array until the fleet changes, when `reset` is called). */
  constructor(private nodes: readonly CandidateNode[] = []) {}

  /** The fleet changed: these are its available nodes now, by id; what was found is stale. */
  reset(nodes: readonly CandidateNode[]): void {
    this.nodes = nodes;
    this.byBase = new WeakMap();
  }

  /**
   * Whether the nodes fall in fewer than `most` classes against this base; `free` is PeakFree's for it. Stops reading
   * once it has found `most`: a fleet of nodes all unlike costs a few hundred nodes' reading, not the fleet's.
   */
  fewerThan(base: ReadonlyMap<string, Resources>, free: Float64Array, most: number): boolean {
    const found = this.byBase.get(base);
    if (typeof found === "number" && found >= most) return false;
    const classes = typeof found === "object" ? found : this.classesOf(base, free, most);
    return classes !== undefined && classes.members.length < most;
  }

  /**
   * The available nodes by capacity rank against `peak` (judge's: ⌊w ÷ peak × 100⌋), highest first, equal ranks by id;
   * undefined when a rank falls outside 0–100 (`peak` is not the fleet's). `indexOf` finds an available node's index
   * by id (−1: gone or not available); `free` is PeakFree's for the ledger's base.
   */
  order(
    weights: CapacityWeights,
    ledger: CapacityLedger,
    peak: number,
    free: Float64Array,
    indexOf: (id: string) => number,
  ): RankOrder | undefined {
    const classes = this.classesOf(ledger.sharedBase, free, Infinity) as Classes;
    const changes = ledger.recentChanges;
    const k = classes.members.length;
    // Entries: the classes, then the nodes the changes name, each weighed as it is now.
    const single: number[] = [];
    const ranks: number[] = [];
    const rankOf = (w: number): number => Math.floor((w / peak) * MAX_CAPACITY_RANK);
    const cf = classes.free;
    for (let c = 0; c < k; c++) {
      const o = c * WIDTH;
      ranks.push(
        rankOf(weighFree(cf[o] as number, cf[o + 1] as number, cf[o + 2] as number, cf[o + 3] as number, weights)),
      );
    }
    for (const [id, held] of changes) {
      const at = indexOf(id);
      if (at < 0) continue;
      single.push(at);
      ranks.push(rankOf(weightedFree((this.nodes[at] as CandidateNode).capacity, held ?? NO_RESOURCES, weights)));
    }
    // Counting sort of the entries by rank, highest first.
    const levels = new Int32Array(MAX_CAPACITY_RANK + 2);
    for (const r of ranks) {
      if (!(r >= 0 && r <= MAX_CAPACITY_RANK)) return undefined;
      levels[MAX_CAPACITY_RANK - r + 1] = (levels[MAX_CAPACITY_RANK - r + 1] as number) + 1;
    }
    for (let l = 1; l < levels.length; l++) levels[l] = (levels[l] as number) + (levels[l - 1] as number);
    const entries = new Int32Array(ranks.length);
    const fill = levels.slice();
    ranks.forEach((r, e) => {
      const at = fill[MAX_CAPACITY_RANK - r] as number;
      fill[MAX_CAPACITY_RANK - r] = at + 1;
      entries[at] = e;
    });
    const nodes = this.nodes;
    const members = classes.members;
    const lengthOf = (e: number): number => (e < k ? (members[e] as Int32Array).length : 1);
    const memberAt = (e: number, i: number): number =>
      e < k ? ((members[e] as Int32Array)[i] as number) : (single[e - k] as number);
    // The entries of the current rank, merged by id: a heap of entries by the id of each one's next node.
    let level = 0;
    const heap: number[] = [];
    const pos = new Int32Array(ranks.length);
    const idAt = (e: number): string => (nodes[memberAt(e, pos[e] as number)] as CandidateNode).id;
    const less = (a: number, b: number): boolean => idAt(a) < idAt(b);
    const down = (from: number): void => {
      let i = from;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heap.length) return;
        const m = l + 1 < heap.length && less(heap[l + 1] as number, heap[l] as number) ? l + 1 : l;
        if (!less(heap[m] as number, heap[i] as number)) return;
        const t = heap[i] as number;
        heap[i] = heap[m] as number;
        heap[m] = t;
        i = m;
      }
    };
    const openLevel = (): boolean => {
      while (heap.length === 0) {
        if (level > MAX_CAPACITY_RANK) return false;
        for (let at = levels[level] as number; at < (levels[level + 1] as number); at++) {
          const e = entries[at] as number;
          if (lengthOf(e) > 0) heap.push(e);
        }
        level++;
        for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
      }
      return true;
    };
    return {
      next(): number {
        for (;;) {
          if (!openLevel()) return -1;
          const e = heap[0] as number;
          const p = pos[e] as number;
          const at = memberAt(e, p);
          pos[e] = p + 1;
          if (p + 1 < lengthOf(e)) down(0);
          else {
            heap[0] = heap[heap.length - 1] as number;
            heap.pop();
            down(0);
          }
          // A node the changes name holds other than its class says: its own entry stands for it.
          if (e < k && changes.has((nodes[at] as CandidateNode).id)) continue;
          return at;
        }
      },
    };
  }

  /** The classes against this base; undefined once `most` are found (the count is kept, not the classes). */
  private classesOf(base: ReadonlyMap<string, Resources>, free: Float64Array, most: number): Classes | undefined {
    const known = this.byBase.get(base);
    if (typeof known === "object") return known;
    const n = this.nodes.length;
    // Open addressing on the four numbers (no key strings: this pass is per base, over every available node).
    let mask = 63;
    let table = new Int32Array(mask + 1).fill(-1);
    const sizes: number[] = [];
    const firsts: number[] = [];
    const keys = new Int32Array(n);
    const same = (o: number, c: number): boolean => {
      const q = (firsts[c] as number) * WIDTH;
      return (
        free[o] === free[q] && free[o + 1] === free[q + 1] && free[o + 2] === free[q + 2] && free[o + 3] === free[q + 3]
      );
    };
    const slotOf = (o: number): number => {
      let h = 0;
      for (let j = 0; j < WIDTH; j++) h = Math.imul(h ^ (((free[o + j] as number) % 2147483647) | 0), 0x9e3779b1);
      let s = (h ^ (h >>> 15)) & mask;
      while (table[s] !== -1 && !same(o, table[s] as number)) s = (s + 1) & mask;
      return s;
    };
    // Nodes alike sit side by side more often than not: the previous node's class is tried first, from locals.
    let last = -1;
    let f0 = NaN;
    let f1 = NaN;
    let f2 = NaN;
    let f3 = NaN;
    for (let i = 0; i < n; i++) {
      const o = i * WIDTH;
      const a0 = free[o] as number;
      const a1 = free[o + 1] as number;
      const a2 = free[o + 2] as number;
      const a3 = free[o + 3] as number;
      if (a0 !== f0 || a1 !== f1 || a2 !== f2 || a3 !== f3) {
        const s = slotOf(o);
        let c = table[s] as number;
        if (c < 0) {
          if (sizes.length >= most) {
            this.byBase.set(base, sizes.length);
            return undefined;
          }
          c = sizes.length;
          table[s] = c;
          sizes.push(0);
          firsts.push(i);
          if (2 * sizes.length > mask) {
            mask = 2 * mask + 1;
            table = new Int32Array(mask + 1).fill(-1);
            firsts.forEach((first, d) => (table[slotOf(first * WIDTH)] = d));
          }
        }
        last = c;
        f0 = a0;
        f1 = a1;
        f2 = a2;
        f3 = a3;
      }
      keys[i] = last;
      sizes[last] = (sizes[last] as number) + 1;
    }
    const members = sizes.map((size) => new Int32Array(size));
    const filled = new Int32Array(sizes.length);
    for (let i = 0; i < n; i++) {
      const c = keys[i] as number;
      const at = filled[c] as number;
      filled[c] = at + 1;
      (members[c] as Int32Array)[at] = i;
    }
    const classFree = new Float64Array(sizes.length * WIDTH);
    firsts.forEach((i, c) => classFree.set(free.subarray(i * WIDTH, i * WIDTH + WIDTH), c * WIDTH));
    const found = { free: classFree, members };
    this.byBase.set(base, found);
    return found;
  }
}
