import type { NodeState } from "../../machines/node/node-state.ts";

const REGISTERED = 1;
const PENDING = 2;

/**
 * Every node id this orchestrator has stored events for, with the two facts asked of all of
 * them at once — in the cluster or deleted, awaiting approval or not — so that neither id
 * look-ups nor the PENDING cap has to visit every node (or load its actor).
 */
export class NodeDirectory {
  private readonly entries = new Map<string, number>();
  private pendingCount = 0;

  /** Records what a node's state now says about it. */
  set(state: NodeState): void {
    const before = this.entries.get(state.nodeId);
    const flags = (state.registered ? REGISTERED : 0) | (state.registered && state.membership === "PENDING" ? PENDING : 0);
    if (before !== undefined && (before & PENDING) !== 0) this.pendingCount--;
    if ((flags & PENDING) !== 0) this.pendingCount++;
    this.entries.set(state.nodeId, flags);
  }

  has(nodeId: string): boolean {
    return this.entries.has(nodeId);
  }

  isRegistered(nodeId: string): boolean {
    return ((this.entries.get(nodeId) ?? 0) & REGISTERED) !== 0;
  }

  get pending(): number {
    return this.pendingCount;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Ids in the cluster now, or also the deleted ones (whose history is all that is left). */
  *ids(includeDeleted: boolean): IterableIterator<string> {
    for (const [id, flags] of this.entries) if (includeDeleted || (flags & REGISTERED) !== 0) yield id;
  }
}
