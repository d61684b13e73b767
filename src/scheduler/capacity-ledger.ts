import { NO_RESOURCES, addResources, isZeroResources, subtractResources, type Resources } from "./resources.ts";

/** One execution's hold on a node. */
export interface Allocation {
  readonly nodeId: string;
  readonly resources: Resources;
}

/** A node's entry in a ledger's recent changes: what it holds now, or null once released to zero. */
type Change = Resources | null;

/**
 * What Shoal has placed on each node and not yet released: the resources of every execution it
 * created there that has not reached a terminal state. A node's free capacity is its capacity
 * minus this. Immutable: placeJob takes one and returns the next, so a caller placing jobs one
 * after another threads it through and two placements can never both count the same free
 * capacity, and any ledger it was given stays as it was.
 *
 * Persistent rather than copied: a ledger is a shared base map (never changed once built) plus
 * the changes made since, in a small map of its own. reserve and release copy only those
 * changes, and fold them into a new base once they outgrow √(base size): O(√n) per update
 * instead of the whole map's copy, and a lookup is two map reads.
 */
export class CapacityLedger {
  private constructor(
    private readonly base: ReadonlyMap<string, Resources>,
    private readonly changes: ReadonlyMap<string, Change>,
  ) {}

  /** @internal Built only by this module (ledgerOf, reserve, release). */
  static of(base: ReadonlyMap<string, Resources>, changes: ReadonlyMap<string, Change>): CapacityLedger {
    return new CapacityLedger(base, changes);
  }

  /** What the ledger holds on this node (zero when nothing). */
  held(nodeId: string): Resources {
    const changed = this.changes.get(nodeId);
    if (changed !== undefined) return changed ?? NO_RESOURCES;
    return this.base.get(nodeId) ?? NO_RESOURCES;
  }

  /**
   * Every node holding something, with what it holds: a snapshot, built on each read (for tests and reports, not
   * placement).
   */
  get placed(): ReadonlyMap<string, Resources> {
    const out = new Map(this.base);
    for (const [id, r] of this.changes) {
      if (r === null) out.delete(id);
      else out.set(id, r);
    }
    return out;
  }

  /**
   * @internal The shared base: the same map until the changes are folded into a new one, so what is derived from it
   * may be kept beside it (keyed by its identity) and corrected by the few changes.
   */
  get sharedBase(): ReadonlyMap<string, Resources> {
    return this.base;
  }

  /** @internal What changed since the base, per node: what it holds now, null when released to zero. */
  get recentChanges(): ReadonlyMap<string, Resources | null> {
    return this.changes;
  }

  /** @internal The ledger with these per-node changes applied. */
  apply(update: (current: Resources, a: Allocation) => Resources, allocations: Iterable<Allocation>): CapacityLedger {
    const changes = new Map(this.changes);
    for (const a of allocations) {
      const before = changes.has(a.nodeId)
        ? (changes.get(a.nodeId) ?? NO_RESOURCES)
        : (this.base.get(a.nodeId) ?? NO_RESOURCES);
      const after = update(before, a);
      // A node at zero is absent from the base; from the changes it is removed by a null over a base entry.
      if (isZeroResources(after)) {
        if (this.base.has(a.nodeId)) changes.set(a.nodeId, null);
        else changes.delete(a.nodeId);
      } else changes.set(a.nodeId, after);
    }
    if (changes.size * changes.size <= Math.max(FOLD_AT * FOLD_AT, this.base.size))
      return new CapacityLedger(this.base, changes);
    return new CapacityLedger(folded(this.base, changes), EMPTY_CHANGES);
  }
}

/** Changes kept apart from the base up to this many, or √(base size) if more. */
const FOLD_AT = 32;

const EMPTY_CHANGES: ReadonlyMap<string, Change> = new Map();

function folded(base: ReadonlyMap<string, Resources>, changes: ReadonlyMap<string, Change>): Map<string, Resources> {
  const out = new Map(base);
  for (const [id, r] of changes) {
    if (r === null) out.delete(id);
    else out.set(id, r);
  }
  return out;
}

export const EMPTY_LEDGER: CapacityLedger = CapacityLedger.of(new Map(), EMPTY_CHANGES);

/**
 * The ledger of these allocations (the non-terminal executions a read model holds, say): built in place, in one pass.
 */
export function ledgerOf(allocations: Iterable<Allocation>): CapacityLedger {
  const base = new Map<string, Resources>();
  for (const a of allocations) {
    const after = addResources(base.get(a.nodeId) ?? NO_RESOURCES, a.resources);
    if (isZeroResources(after)) base.delete(a.nodeId);
    else base.set(a.nodeId, after);
  }
  return CapacityLedger.of(base, EMPTY_CHANGES);
}

export function placedOn(ledger: CapacityLedger, nodeId: string): Resources {
  return ledger.held(nodeId);
}

/** The ledger with these allocations added; `ledger` itself is unchanged. */
export function reserve(ledger: CapacityLedger, allocations: Iterable<Allocation>): CapacityLedger {
  return ledger.apply((current, a) => addResources(current, a.resources), allocations);
}

/**
 * The ledger with these allocations given back (their executions ended); `ledger` itself is
 * unchanged. A node's entry never goes below zero, and goes away at zero.
 */
export function release(ledger: CapacityLedger, allocations: Iterable<Allocation>): CapacityLedger {
  return ledger.apply((current, a) => subtractResources(current, a.resources), allocations);
}
