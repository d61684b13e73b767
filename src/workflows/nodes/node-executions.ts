import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { lostWithNode } from "../../scheduler/job-outcome.ts";
import { holdsCapacity } from "../jobs/execution-ledger.ts";

/**
 * The executions of each node, as the job read model folds them: those under way (what a node's
 * loss moves), and those the orchestrator gave up on with the node that it may still run (what it
 * is told to stop when it comes back). One update per execution change; every question is O(1)
 * per node, so the node-reactions workflow can ask for every node event.
 */
export class NodeExecutions {
  private readonly underWay = new Map<string, Map<string, ExecutionState>>();
  private readonly lost = new Map<string, Set<string>>();
  /** The node each execution under way is indexed under. */
  private readonly nodeOf = new Map<string, string>();

  static of(executions: Iterable<ExecutionState>): NodeExecutions {
    const out = new NodeExecutions();
    for (const e of executions) out.update(e);
    return out;
  }

  update(e: ExecutionState): void {
    const id = e.executionId;
    const was = this.nodeOf.get(id);
    if (was !== undefined) {
      const onNode = this.underWay.get(was);
      onNode?.delete(id);
      if (onNode?.size === 0) this.underWay.delete(was);
      this.nodeOf.delete(id);
    }
    if (holdsCapacity(e)) {
      let onNode = this.underWay.get(e.nodeId);
      if (onNode === undefined) this.underWay.set(e.nodeId, (onNode = new Map()));
      onNode.set(id, e);
      this.nodeOf.set(id, e.nodeId);
    } else if (was !== undefined && e.computeState === "Failed" && lostWithNode(e.computeMessage)) {
      // Lost while this process watched: the node may still run it.
      this.markLost(e.nodeId, id);
    }
  }

  /** Seeds the executions lost with their nodes (after a restart) whose nodes are not back yet. */
  seedLost(executions: Iterable<ExecutionState>, nodeIsBack: (nodeId: string) => boolean): void {
    for (const e of executions)
      if (e.computeState === "Failed" && lostWithNode(e.computeMessage) && !nodeIsBack(e.nodeId))
        this.markLost(e.nodeId, e.executionId);
  }

  markLost(nodeId: string, executionId: string): void {
    let ids = this.lost.get(nodeId);
    if (ids === undefined) this.lost.set(nodeId, (ids = new Set()));
    ids.add(executionId);
  }

  holdsWork(nodeId: string): boolean {
    return this.underWay.has(nodeId);
  }

  holdsDaemonWork(nodeId: string): boolean {
    for (const e of this.underWay.get(nodeId)?.values() ?? []) if (e.jobType === "daemon") return true;
    return false;
  }

  /** The node's executions under way (a copy). */
  underWayOn(nodeId: string): ExecutionState[] {
    return [...(this.underWay.get(nodeId)?.values() ?? [])];
  }

  /** Nodes that hold executions under way. */
  nodesWithWork(): IterableIterator<string> {
    return this.underWay.keys();
  }

  mayRunLostWork(nodeId: string): boolean {
    return this.lost.has(nodeId);
  }

  /** The executions lost with the node, forgotten as they are handed over (the node is told to stop them once). */
  takeLost(nodeId: string): string[] {
    const ids = this.lost.get(nodeId);
    this.lost.delete(nodeId);
    return ids === undefined ? [] : [...ids];
  }
}
