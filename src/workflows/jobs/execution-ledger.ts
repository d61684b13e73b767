import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import {
  EMPTY_LEDGER,
  ledgerOf,
  release,
  reserve,
  type Allocation,
  type CapacityLedger,
} from "../../scheduler/capacity-ledger.ts";
import { allocationOf, holdsCapacity } from "../../scheduler/holds-capacity.ts";

interface Hold {
  readonly allocation: Allocation;
  /**
   * The state's resources object it was made of: an execution whose next state shares it holds the same. Undefined
   * for a reservation made at plan time, before the read model folded the execution.
   */
  readonly source: ExecutionState["allocatedResources"] | undefined;
  /** The job a reservation made at plan time is for (undefined once the read model folded the execution). */
  readonly jobId?: string;
}

/**
 * The capacity ledger of every execution that holds capacity, kept up to date one execution
 * state at a time (as the job read model folds them) instead of rebuilt from every execution
 * before each placement: an update is a release and a reserve on the persistent ledger, O(√n).
 * After a restart it is seeded from the read model's executions and fed the events replayed
 * after them, and so holds what a rebuild from the final states would (`ledgerOf`).
 *
 * A placement reserves what it plans to create (reserve) before its Create is appended, under the execution's id: the
 * read model's fold of that execution replaces the reservation (update), so it is never counted twice, and a Create
 * that was never stored gives it back (forget).
 */
export class ExecutionLedger {
  private ledger: CapacityLedger = EMPTY_LEDGER;
  private readonly holds = new Map<string, Hold>();
  /** Per job, its executions reserved at plan time and not folded yet (only jobs that have some). */
  private readonly planned = new Map<string, Set<string>>();

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

  /**
   * The ledger now without what `jobId`'s own plans reserved and the read model has not folded: what the job's next
   * evaluation reads. Once a job's earlier plan is carried out its Creates are folded before the job is evaluated again
   * (its writes are waited for), so these are only Creates whose outcome is unknown (the store answered Unavailable):
   * planned again, they must not count against their own job, and the new plan's reservation replaces them.
   */
  currentFor(jobId: string): CapacityLedger {
    const ids = this.planned.get(jobId);
    if (ids === undefined) return this.ledger;
    return release(
      this.ledger,
      [...ids].flatMap((id) => {
        const held = this.holds.get(id);
        return held === undefined ? [] : [held.allocation];
      }),
    );
  }

  /** Whether this execution holds capacity in the ledger now. */
  holding(executionId: string): boolean {
    return this.holds.has(executionId);
  }

  /**
   * A planned execution holds `allocation` from now on, before its Create is stored. An execution the ledger holds
   * already (the read model folded it) keeps what the read model says, so a replayed plan counts nothing twice. One
   * only reserved (a Create whose outcome was unknown, planned again) holds the new plan's allocation instead of the
   * old: the same execution id may be planned on another node the second time.
   */
  reserve(executionId: string, allocation: Allocation, jobId?: string): void {
    const held = this.holds.get(executionId);
    if (held !== undefined && held.source !== undefined) return;
    if (held !== undefined) this.unplan(executionId, held);
    const next = held === undefined ? this.ledger : release(this.ledger, [held.allocation]);
    this.holds.set(executionId, { allocation, source: undefined, ...(jobId === undefined ? {} : { jobId }) });
    this.ledger = reserve(next, [allocation]);
    if (jobId === undefined) return;
    const ids = this.planned.get(jobId) ?? new Set<string>();
    ids.add(executionId);
    this.planned.set(jobId, ids);
  }

  private unplan(executionId: string, held: Hold): void {
    if (held.jobId === undefined) return;
    const ids = this.planned.get(held.jobId);
    ids?.delete(executionId);
    if (ids?.size === 0) this.planned.delete(held.jobId);
  }

  /**
   * A planned execution whose Create was refused or failed: its reservation is given back. What the read model folded
   * stays (an append that failed after all was stored is folded, and holds from then on).
   */
  forget(executionId: string): void {
    const held = this.holds.get(executionId);
    if (held === undefined || held.source !== undefined) return;
    this.unplan(executionId, held);
    this.holds.delete(executionId);
    this.ledger = release(this.ledger, [held.allocation]);
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
      this.unplan(e.executionId, held);
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
