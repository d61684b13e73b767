import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import {
  EMPTY_LEDGER,
  ledgerOf,
  release,
  reserve,
  type Allocation,
  type CapacityLedger,
} from "../../scheduler/capacity-ledger.ts";
import { holdsCapacity } from "../../scheduler/holds-capacity.ts";
import { fromBacalhauResources } from "../../scheduler/resources.ts";

export function allocationOf(e: ExecutionState): Allocation {
  return { nodeId: e.nodeId, resources: fromBacalhauResources(e.allocatedResources) };
}

interface Hold {
  readonly allocation: Allocation;
  /** The state's resources object it was made of: an execution whose next state shares it holds the same. */
  readonly source: ExecutionState["allocatedResources"];
}

/**
 * The capacity ledger of every execution that holds capacity, kept up to date one execution
 * state at a time (as the job read model folds them) instead of rebuilt from every execution
 * before each placement: an update is a release and a reserve on the persistent ledger, O(√n).
 * After a restart it is seeded from the read model's executions and fed the events replayed
 * after them, and so holds what a rebuild from the final states would (`ledgerOf`).
 */
export class ExecutionLedger {
  private ledger: CapacityLedger = EMPTY_LEDGER;
  private readonly holds = new Map<string, Hold>();

  /** Seeded from these executions (the read model's, after a snapshot's seed), in one pass. */
  static of(executions: Iterable<ExecutionState>): ExecutionLedger {
    const out = new ExecutionLedger();
    for (const e of executions) {
      if (!holdsCapacity(e)) continue;
      out.holds.set(e.executionId, { allocation: allocationOf(e), source: e.allocatedResources });
    }
    out.ledger = ledgerOf([...out.holds.values()].map((h) => h.allocation));
    return out;
  }

  /** The ledger now: immutable, so a placement given it is unaffected by later updates. */
  current(): CapacityLedger {
    return this.ledger;
  }

  /** Whether this execution holds capacity in the ledger now. */
  holding(executionId: string): boolean {
    return this.holds.has(executionId);
  }

  /** An execution's state now: it takes, keeps, moves or gives back its hold. */
  update(e: ExecutionState): void {
    const held = this.holds.get(e.executionId);
    const holds = holdsCapacity(e);
    if (held !== undefined && holds && held.source === e.allocatedResources && held.allocation.nodeId === e.nodeId)
      return;
    let next = this.ledger;
    if (held !== undefined) {
      next = release(next, [held.allocation]);
      this.holds.delete(e.executionId);
    }
    if (holds) {
      const hold = { allocation: allocationOf(e), source: e.allocatedResources };
      next = reserve(next, [hold.allocation]);
      this.holds.set(e.executionId, hold);
    }
    this.ledger = next;
  }
}
