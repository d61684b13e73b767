import { NO_RESOURCES, addResources, isZeroResources, subtractResources, type Resources } from "./resources.ts";

/**
 * What Shoal has placed on each node and not yet released: the resources of every execution it
 * created there that has not reached a terminal state. A node's free capacity is its capacity
 * minus this. Plain immutable data: placeJob takes one and returns the next, so a caller placing
 * jobs one after another threads it through and two placements can never both count the same
 * free capacity.
 */
export interface CapacityLedger {
  readonly placed: ReadonlyMap<string, Resources>;
}

/** One execution's hold on a node. */
export interface Allocation {
  readonly nodeId: string;
  readonly resources: Resources;
}

export const EMPTY_LEDGER: CapacityLedger = Object.freeze({ placed: new Map<string, Resources>() });

/** The ledger of these allocations (the non-terminal executions a read model holds, say). */
export function ledgerOf(allocations: Iterable<Allocation>): CapacityLedger {
  return reserve(EMPTY_LEDGER, allocations);
}

export function placedOn(ledger: CapacityLedger, nodeId: string): Resources {
  return ledger.placed.get(nodeId) ?? NO_RESOURCES;
}

/** The ledger with these allocations added; `ledger` itself is unchanged. */
export function reserve(ledger: CapacityLedger, allocations: Iterable<Allocation>): CapacityLedger {
  const placed = new Map(ledger.placed);
  for (const a of allocations) placed.set(a.nodeId, addResources(placed.get(a.nodeId) ?? NO_RESOURCES, a.resources));
  return { placed };
}

/**
 * The ledger with these allocations given back (their executions ended); `ledger` itself is
 * unchanged. A node's entry never goes below zero, and goes away at zero.
 */
export function release(ledger: CapacityLedger, allocations: Iterable<Allocation>): CapacityLedger {
  const placed = new Map(ledger.placed);
  for (const a of allocations) {
    const left = subtractResources(placed.get(a.nodeId) ?? NO_RESOURCES, a.resources);
    if (isZeroResources(left)) placed.delete(a.nodeId);
    else placed.set(a.nodeId, left);
  }
  return { placed };
}
