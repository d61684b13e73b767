import type { Requirement } from "../../labels/label-selector.ts";
import type { CapacityLedger } from "../capacity-ledger.ts";
import { weightedFree, type CapacityWeights } from "../node-verdicts.ts";
import { candidateProblem } from "../placement-input-error.ts";
import type { CandidateNode } from "../placement-request.ts";
import { NO_RESOURCES, type Resources } from "../resources.ts";
import { CapacityClasses } from "./capacity-classes.ts";
import { FleetView, type FleetLookup, type NextInRank } from "./fleet-view.ts";
import { FreestFirst } from "./freest-first.ts";
import { PeakFree, weighAt, type Leading } from "./peak-free.ts";

/** Past placement's gate: what Bacalhau counts as available. */
const isAvailable = (n: CandidateNode): boolean =>
  n.type === "Compute" && n.membership === "APPROVED" && n.health === "HEALTHY";

/** Available, and no operator withholds new work from it: only such a node can be suitable for a job. */
const isOpen = (n: CandidateNode): boolean =>
  isAvailable(n) && n.cordoned === undefined && n.unschedulable === undefined;

/** A node's engines as placement compares them (without regard to case), each once. */
const enginesOf = (n: CandidateNode): Set<string> => new Set(n.engines.map((e) => e.toLowerCase()));

/**
 * The cluster's candidate nodes, indexed for placement and kept up to date one node change at a time (`update`), so
 * that a placement neither rebuilds candidates nor judges nodes that cannot take its job. Pure: fed by whoever follows
 * the node read model (src/projections/placement-fleet.ts).
 *
 * Indexed: the available nodes (the gate: Compute, APPROVED, HEALTHY), which every placement's capacity ranking reads
 * (PeakFree); and among the open ones (available, not cordoned, not withheld) the nodes by engine and by label
 * key=value. A job's suitable nodes are all in the smallest of the sets its engine and its `=`/`in`/`exists`/`gt`/`lt`
 * constraints name; placement judges no other node, and of that set its freest first (judge-fleet.ts).
 */
export class FleetIndex implements FleetLookup {
  private readonly slotOf = new Map<string, number>();
  /** Nodes by slot; a node keeps its slot once given (a gone node leaves a hole), so the list's order is stable. */
  private slots: (CandidateNode | undefined)[] = [];
  /** Each slot's node id, and the slots by id: ties in rank go by id, and so are the available nodes listed. */
  private readonly idOfSlot: string[] = [];
  private slotsById: number[] = [];
  /** Slots made since slotsById was last read: merged in then, sorted among themselves (a join storm sorts once). */
  private newSlots: number[] = [];
  /** The slots array is a view's too: the next change copies it first. */
  private shared = false;
  private count = 0;
  private problemCount = 0;
  private changes = 0;
  private current: FleetView | undefined;
  private readonly available = new Set<number>();
  /** Open nodes by engine (lower case). */
  private readonly byEngine = new Map<string, Set<number>>();
  /** Open nodes by label key, then value. */
  private readonly byLabel = new Map<string, Map<string, Posting>>();
  /** Open nodes with each label key, whatever its value. */
  private readonly keyCount = new Map<string, number>();
  private readonly peaks = new PeakFree();
  private readonly classes = new CapacityClasses();
  /** The available nodes as PeakFree reads them: made when first asked for after a change. */
  private availableList: CandidateNode[] | undefined;
  /** Each slot's place in availableList (−1: not available). */
  private availableAt: Int32Array | undefined;
  /** The slot of each node in availableList. */
  private availableSlots: Int32Array | undefined;

  get version(): number {
    return this.changes;
  }

  /** How many nodes. */
  get size(): number {
    return this.count;
  }

  /** A node's candidate now; undefined when it is gone (deleted). Unchanged content changes nothing. */
  update(id: string, node: CandidateNode | undefined): void {
    let slot = this.slotOf.get(id);
    const before = slot === undefined ? undefined : this.slots[slot];
    if (node === before || (node !== undefined && before !== undefined && sameCandidate(node, before))) return;
    if (this.shared) {
      this.slots = this.slots.slice();
      this.shared = false;
    }
    if (slot === undefined) {
      slot = this.slots.length;
      this.slotOf.set(id, slot);
      this.slots.push(undefined);
      this.idOfSlot.push(id);
      this.newSlots.push(slot);
    }
    if (before !== undefined) this.remove(slot, before);
    this.slots[slot] = node;
    if (node !== undefined) this.add(slot, node);
    this.changes++;
    this.current = undefined;
    this.availableList = undefined;
  }

  /** The fleet now, as an immutable view (the same one until the next change). */
  view(): FleetView {
    if (this.current === undefined) {
      this.shared = true;
      this.current = new FleetView(this, this.changes, this.slots, this.count, this.problemCount);
    }
    return this.current;
  }

  candidates(engine: string, required: readonly Requirement[]): CandidateNode[] {
    const out: CandidateNode[] = [];
    // A node has one value per key: the sets of one key's values never share a node.
    for (const posting of this.smallest(engine, required).sets)
      forEachSlot(posting, (slot) => out.push(this.slots[slot] as CandidateNode));
    return out;
  }

  candidateCount(engine: string, required: readonly Requirement[]): number {
    return this.smallest(engine, required).size;
  }

  /** How many nodes are available (past the gate). */
  get availableCount(): number {
    return this.available.size;
  }

  /** The smallest of the sets the job's engine and terms name, as the sets whose union it is. */
  private smallest(engine: string, required: readonly Requirement[]): { sets: readonly Posting[]; size: number } {
    const ofEngine = this.byEngine.get(engine);
    if (ofEngine === undefined) return { sets: [], size: 0 };
    let best: readonly Posting[] = [ofEngine];
    let bestSize = ofEngine.size;
    for (const r of required) {
      if (bestSize === 0) break;
      const values = this.byLabel.get(r.key);
      let sets: Posting[];
      let size: number;
      if (r.op === "in") {
        sets = [];
        size = 0;
        for (const v of new Set(r.values)) {
          const s = values?.get(v);
          if (s === undefined) continue;
          sets.push(s);
          size += sizeOf(s);
        }
      } else if (r.op === "exists" || r.op === "gt" || r.op === "lt") {
        // A node without the key matches none of these.
        sets = values === undefined ? [] : [...values.values()];
        size = this.keyCount.get(r.key) ?? 0;
      } else continue;
      if (size < bestSize) {
        best = sets;
        bestSize = size;
      }
    }
    return { sets: best, size: bestSize };
  }

  peakFree(weights: CapacityWeights, ledger: CapacityLedger): number {
    return this.peakOfAvailable().peak(weights, ledger, this.availableNode);
  }

  leading(weights: CapacityWeights, ledger: CapacityLedger, limit: number): Leading | undefined {
    return this.peakOfAvailable().leading(weights, ledger, this.availableNode, limit);
  }

  freestCandidates(
    engine: string,
    required: readonly Requirement[],
    weights: CapacityWeights,
    ledger: CapacityLedger,
  ): FreestFirst {
    const peaks = this.peakOfAvailable();
    const at = this.availableAt as Int32Array;
    const free = peaks.freeAgainst(ledger.sharedBase);
    const changes = ledger.recentChanges;
    const { sets, size } = this.smallest(engine, required);
    const nodes: CandidateNode[] = new Array<CandidateNode>(size);
    const values = new Float64Array(size);
    let n = 0;
    for (const posting of sets)
      forEachSlot(posting, (slot) => {
        const node = this.slots[slot] as CandidateNode;
        const held = changes.get(node.id);
        nodes[n] = node;
        // A node the ledger's changes name holds other than its base says.
        values[n++] =
          held === undefined
            ? weighAt(free, at[slot] as number, weights)
            : weightedFree(node.capacity, held ?? NO_RESOURCES, weights);
      });
    return new FreestFirst(nodes, values);
  }

  fewerClassesThan(ledger: CapacityLedger, most: number): boolean {
    const peaks = this.peakOfAvailable();
    return this.classes.fewerThan(ledger.sharedBase, peaks.freeAgainst(ledger.sharedBase), most);
  }

  rankOrder(
    engine: string,
    required: readonly Requirement[],
    weights: CapacityWeights,
    ledger: CapacityLedger,
    peak: number,
    budget: number,
  ): NextInRank | undefined {
    const peaks = this.peakOfAvailable();
    const list = this.availableList as CandidateNode[];
    const slots = this.availableSlots as Int32Array;
    const order = this.classes.order(weights, ledger, peak, peaks.freeAgainst(ledger.sharedBase), this.availableIndex);
    if (order === undefined) return undefined;
    const { sets } = this.smallest(engine, required);
    let passed = 0;
    return () => {
      for (;;) {
        const at = order.next();
        if (at < 0) return undefined;
        if (passed++ >= budget) return null;
        const slot = slots[at] as number;
        // Available nodes outside the job's smallest set cannot be suitable: passed over, not judged.
        for (const p of sets) if (typeof p === "number" ? p === slot : p.has(slot)) return list[at] as CandidateNode;
      }
    };
  }

  private peakOfAvailable(): PeakFree {
    if (this.availableList === undefined) {
      const list: CandidateNode[] = [];
      const slots: number[] = [];
      const at = new Int32Array(this.slots.length).fill(-1);
      for (const slot of this.byId()) {
        if (!this.available.has(slot)) continue;
        at[slot] = list.length;
        list.push(this.slots[slot] as CandidateNode);
        slots.push(slot);
      }
      this.availableList = list;
      this.availableAt = at;
      this.availableSlots = Int32Array.from(slots);
      this.peaks.reset(list);
      this.classes.reset(list);
    }
    return this.peaks;
  }

  private readonly availableIndex = (id: string): number => {
    const slot = this.slotOf.get(id);
    return slot === undefined ? -1 : ((this.availableAt as Int32Array)[slot] ?? -1);
  };

  /** Every slot, by its node's id. */
  private byId(): readonly number[] {
    if (this.newSlots.length === 0) return this.slotsById;
    const ids = this.idOfSlot;
    const idOf = (slot: number) => ids[slot] as string;
    const added = this.newSlots.sort((a, b) => (idOf(a) < idOf(b) ? -1 : 1));
    const old = this.slotsById;
    const merged: number[] = [];
    let i = 0;
    let j = 0;
    while (i < old.length || j < added.length) {
      if (j === added.length || (i < old.length && idOf(old[i] as number) < idOf(added[j] as number)))
        merged.push(old[i++] as number);
      else merged.push(added[j++] as number);
    }
    this.slotsById = merged;
    this.newSlots = [];
    return merged;
  }

  private readonly availableNode = (id: string): CandidateNode | undefined => {
    const slot = this.slotOf.get(id);
    return slot !== undefined && this.available.has(slot) ? this.slots[slot] : undefined;
  };

  private add(slot: number, node: CandidateNode): void {
    this.count++;
    if (candidateProblem(node) !== undefined) this.problemCount++;
    if (!isAvailable(node)) return;
    this.available.add(slot);
    if (!isOpen(node)) return;
    for (const engine of enginesOf(node)) setOf(this.byEngine, engine).add(slot);
    const labels = node.labels;
    for (const key in labels) {
      if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
      let values = this.byLabel.get(key);
      if (values === undefined) this.byLabel.set(key, (values = new Map()));
      addPosting(values, labels[key] as string, slot);
      this.keyCount.set(key, (this.keyCount.get(key) ?? 0) + 1);
    }
  }

  private remove(slot: number, node: CandidateNode): void {
    this.count--;
    if (candidateProblem(node) !== undefined) this.problemCount--;
    if (!this.available.delete(slot) || !isOpen(node)) return;
    for (const engine of enginesOf(node)) dropFrom(this.byEngine, engine, slot);
    const labels = node.labels;
    for (const key in labels) {
      if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
      const values = this.byLabel.get(key);
      if (values === undefined) continue;
      dropPosting(values, labels[key] as string, slot);
      if (values.size === 0) this.byLabel.delete(key);
      const left = (this.keyCount.get(key) ?? 1) - 1;
      if (left === 0) this.keyCount.delete(key);
      else this.keyCount.set(key, left);
    }
  }
}

/**
 * The slots of the nodes with one label value. A value only one node has (a hostname, say) is kept as the slot itself,
 * not as a set of one: ≈ 150 B less a node for each such label.
 */
type Posting = number | Set<number>;

const sizeOf = (p: Posting): number => (typeof p === "number" ? 1 : p.size);

function forEachSlot(p: Posting, visit: (slot: number) => void): void {
  if (typeof p === "number") visit(p);
  else for (const slot of p) visit(slot);
}

function addPosting(values: Map<string, Posting>, value: string, slot: number): void {
  const p = values.get(value);
  if (p === undefined) values.set(value, slot);
  else if (typeof p !== "number") p.add(slot);
  else if (p !== slot) values.set(value, new Set([p, slot]));
}

function dropPosting(values: Map<string, Posting>, value: string, slot: number): void {
  const p = values.get(value);
  if (p === undefined) return;
  if (typeof p === "number") {
    if (p === slot) values.delete(value);
    return;
  }
  p.delete(slot);
  if (p.size === 0) values.delete(value);
  else if (p.size === 1) values.set(value, p.values().next().value as number);
}

function setOf<K>(map: Map<K, Set<number>>, key: K): Set<number> {
  let set = map.get(key);
  if (set === undefined) map.set(key, (set = new Set()));
  return set;
}

function dropFrom<K>(map: Map<K, Set<number>>, key: K, slot: number): void {
  const set = map.get(key);
  if (set === undefined) return;
  set.delete(slot);
  if (set.size === 0) map.delete(key);
}

const sameResources = (a: Resources | undefined, b: Resources | undefined): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.cpuMillis === b.cpuMillis &&
    a.memoryBytes === b.memoryBytes &&
    a.diskBytes === b.diskBytes &&
    a.gpus === b.gpus);

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!Object.prototype.hasOwnProperty.call(b, k) || a[k] !== b[k]) return false;
  return true;
}

/**
 * Whether two candidates are alike in everything placement reads: a node event that changes none of it (a new
 * revision, a heartbeat instant) then leaves the index, its views and what was derived from it as they are.
 */
function sameCandidate(a: CandidateNode, b: CandidateNode): boolean {
  return (
    a.id === b.id &&
    a.type === b.type &&
    a.membership === b.membership &&
    a.health === b.health &&
    a.cordoned?.reason === b.cordoned?.reason &&
    (a.cordoned === undefined) === (b.cordoned === undefined) &&
    a.unschedulable === b.unschedulable &&
    a.engines.length === b.engines.length &&
    a.engines.every((e, i) => e === b.engines[i]) &&
    (a.publishers ?? []).join("\n") === (b.publishers ?? []).join("\n") &&
    (a.storageSources ?? []).join("\n") === (b.storageSources ?? []).join("\n") &&
    sameResources(a.capacity, b.capacity) &&
    sameResources(a.maxJobRequirements, b.maxJobRequirements) &&
    sameLabels(a.labels, b.labels)
  );
}
