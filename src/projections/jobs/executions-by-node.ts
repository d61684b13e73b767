import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { holdsCapacity } from "../../scheduler/holds-capacity.ts";
import { lostWithNode } from "../../scheduler/job-outcome.ts";

/** Node events after which a node is back (the node-reactions' NodeBack): it is told to stop what was lost with it. */
export const NODE_RETURNS: ReadonlySet<string> = new Set(["NodeBecameHealthy", "NodeApproved"]);

/** A node's returns remembered: what was lost before the oldest is forgotten. */
const RETURNS_KEPT = 3;

/** An execution lost with its node, and the store position of the event that failed it. */
interface Lost {
  readonly id: string;
  readonly at: number;
}

/** What the index holds beyond the executions' states (a snapshot carries it: it comes from node events too). */
export interface ExecutionsByNodeSnapshot {
  /** Per node, its executions lost with it and their failures' positions, oldest first. */
  readonly lost: readonly (readonly [string, readonly Lost[]])[];
  /** Per node with executions lost with it, the positions of its last returns since (at most three), oldest first. */
  readonly returns: readonly (readonly [string, readonly number[]])[];
}

const lostWithItsNode = (e: ExecutionState | undefined): boolean =>
  e?.computeState === "Failed" && lostWithNode(e.computeMessage);

/**
 * Each node's executions, folded from the store with the job read model: those under way (what a node's loss moves),
 * and those the orchestrator failed as lost with the node since it was last back, which it may still run (what it is
 * told to stop when it comes back). Stored facts only, in store order, so a fold from scratch answers as a running one
 * does. Every question is O(1) per node (or per lost execution), so the node-reactions workflow can ask for every node
 * event.
 */
export class ExecutionsByNode {
  private readonly underWay = new Map<string, Map<string, ExecutionState>>();
  /** The node each execution under way is indexed under. */
  private readonly nodeOf = new Map<string, string>();
  private readonly lost = new Map<string, Lost[]>();
  private readonly returns = new Map<string, number[]>();

  /**
   * Starts from the read model's executions and a snapshot's node facts (before any event is folded). The returns of a
   * node with nothing lost with it, which older snapshots hold, are left out as nodeReturned leaves them out.
   */
  seed(executions: Iterable<ExecutionState>, snapshot: ExecutionsByNodeSnapshot): void {
    for (const e of executions) if (holdsCapacity(e)) this.index(e);
    for (const [nodeId, lost] of snapshot.lost) if (lost.length > 0) this.lost.set(nodeId, [...lost]);
    for (const [nodeId, at] of snapshot.returns) if (this.lost.has(nodeId)) this.returns.set(nodeId, [...at]);
  }

  snapshot(): ExecutionsByNodeSnapshot {
    return { lost: [...this.lost], returns: [...this.returns] };
  }

  /** An execution's state after the event at `position` (`before`: its state until then). */
  executionChanged(before: ExecutionState | undefined, after: ExecutionState, position: number): void {
    const id = after.executionId;
    const was = this.nodeOf.get(id);
    if (was !== undefined) {
      const onNode = this.underWay.get(was);
      onNode?.delete(id);
      if (onNode?.size === 0) this.underWay.delete(was);
      this.nodeOf.delete(id);
    }
    if (holdsCapacity(after)) this.index(after);
    else if (lostWithItsNode(after) && !lostWithItsNode(before)) {
      let lost = this.lost.get(after.nodeId);
      if (lost === undefined) this.lost.set(after.nodeId, (lost = []));
      lost.push({ id, at: position });
    }
  }

  /**
   * The node is back (NODE_RETURNS) with the event at `position`. What was lost before the return before its previous
   * one was told then and is forgotten; the rest is kept, so that the reactions to this return and to the previous one
   * find theirs whether this index folded the return before they react or after.
   *
   * Returns are remembered only while something lost with the node is: every execution it loses later is failed after
   * them, so they bound no answer of lostBefore and forget nothing sooner. A fleet whose nodes come and go without
   * losing work then costs nothing here, nor in the snapshot.
   */
  nodeReturned(nodeId: string, position: number): void {
    const lost = this.lost.get(nodeId);
    if (lost === undefined) return;
    const kept = [...(this.returns.get(nodeId) ?? []), position].slice(-RETURNS_KEPT);
    if (kept.length === RETURNS_KEPT) {
      const told = kept[0] as number;
      const left = lost.filter((l) => l.at > told);
      if (left.length === 0) {
        this.lost.delete(nodeId);
        this.returns.delete(nodeId);
        return;
      }
      this.lost.set(nodeId, left);
    }
    this.returns.set(nodeId, kept);
  }

  holdsWork(nodeId: string): boolean {
    return this.underWay.has(nodeId);
  }

  holdsDaemonWork(nodeId: string): boolean {
    for (const e of this.underWay.get(nodeId)?.values() ?? []) if (e.jobType === "daemon") return true;
    return false;
  }

  /** How many executions are under way on the node (a map read: the node's REST answer asks it per request). */
  underWayCount(nodeId: string): number {
    return this.underWay.get(nodeId)?.size ?? 0;
  }

  /** The node's executions under way (a copy). */
  underWayOn(nodeId: string): ExecutionState[] {
    return [...(this.underWay.get(nodeId)?.values() ?? [])];
  }

  /** Nodes that hold executions under way (a copy: the fold goes on while the caller awaits). */
  nodesWithWork(): string[] {
    return [...this.underWay.keys()];
  }

  /**
   * The executions lost with the node that it is told to stop when it is back with the event at `at`: those failed as
   * lost with it after its previous return and before `at`. Without `at`: those lost since its last return folded.
   */
  lostBefore(nodeId: string, at = Number.POSITIVE_INFINITY): string[] {
    const lost = this.lost.get(nodeId);
    if (lost === undefined) return [];
    let since = Number.NEGATIVE_INFINITY;
    for (const r of this.returns.get(nodeId) ?? []) if (r < at) since = r;
    return lost.filter((l) => l.at > since && l.at < at).map((l) => l.id);
  }

  /** Whether the node, back with the event at `at`, may still run executions lost with it (lostBefore). */
  mayRunLostWork(nodeId: string, at?: number): boolean {
    return this.lostBefore(nodeId, at).length > 0;
  }

  private index(e: ExecutionState): void {
    let onNode = this.underWay.get(e.nodeId);
    if (onNode === undefined) this.underWay.set(e.nodeId, (onNode = new Map()));
    onNode.set(e.executionId, e);
    this.nodeOf.set(e.executionId, e.nodeId);
  }
}
