import type { NodeState } from "../../machines/node/node-state.ts";

const REGISTERED = 1;
const PENDING = 2;

/**
 * A flat copy of an id: ids taken from messages and stream names are slices of the whole
 * message (or name), and a slice kept keeps all of it alive.
 */
function ownCopy(id: string): string {
  return Buffer.from(id, "utf8").toString("utf8");
}

/**
 * Every node id this orchestrator has stored events for, with the two facts asked of all of
 * them at once — in the cluster or deleted, awaiting approval or not — so that neither id
 * look-ups nor the PENDING cap has to visit every node (or load its actor). It holds each node's
 * one id string (`canonical`): everything the orchestrator keeps per node is keyed by that string.
 */
export class NodeDirectory {
  /** Id → its index in `idAt` and `flagsAt` (nodes are never removed: a deleted node's history stays). */
  private readonly entries = new Map<string, number>();
  private readonly idAt: string[] = [];
  private readonly flagsAt: number[] = [];
  private pendingCount = 0;

  /** Records what a node's state now says about it; returns the node's one id string. */
  set(state: NodeState): string {
    let i = this.entries.get(state.nodeId);
    if (i === undefined) {
      i = this.idAt.length;
      const id = ownCopy(state.nodeId);
      this.idAt.push(id);
      this.flagsAt.push(0);
      this.entries.set(id, i);
    }
    const before = this.flagsAt[i] as number;
    const flags =
      (state.registered ? REGISTERED : 0) | (state.registered && state.membership === "PENDING" ? PENDING : 0);
    if ((before & PENDING) !== 0) this.pendingCount--;
    if ((flags & PENDING) !== 0) this.pendingCount++;
    this.flagsAt[i] = flags;
    return this.idAt[i] as string;
  }

  /** The directory's own string for this id (equal to it), or undefined for an id it does not know. */
  canonical(nodeId: string): string | undefined {
    const i = this.entries.get(nodeId);
    return i === undefined ? undefined : this.idAt[i];
  }

  has(nodeId: string): boolean {
    return this.entries.has(nodeId);
  }

  isRegistered(nodeId: string): boolean {
    const i = this.entries.get(nodeId);
    return i !== undefined && ((this.flagsAt[i] as number) & REGISTERED) !== 0;
  }

  get pending(): number {
    return this.pendingCount;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Ids in the cluster now, or also the deleted ones (whose history is all that is left). */
  *ids(includeDeleted: boolean): IterableIterator<string> {
    for (let i = 0; i < this.idAt.length; i++)
      if (includeDeleted || ((this.flagsAt[i] as number) & REGISTERED) !== 0) yield this.idAt[i] as string;
  }
}
