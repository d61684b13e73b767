import { describe, expect, it } from "vitest";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { ledgerOf, type Allocation } from "../../../src/scheduler/capacity-ledger.ts";
import { allocationOf, holdsCapacity } from "../../../src/scheduler/holds-capacity.ts";
import { ExecutionLedger } from "../../../src/workflows/jobs/execution-ledger.ts";

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const COMPUTE = [
  "New",
  "AskForBid",
  "AskForBidAccepted",
  "BidAccepted",
  "Running",
  "Completed",
  "Failed",
  "Cancelled",
  "BidRejected",
  "AskForBidRejected",
] as const;

/**
 * A life of executions as the read model folds them: each change a new state, the resources object kept as evolve keeps
 * it.
 */
function lives(seed: number, steps: number): ExecutionState[] {
  const r = random(seed);
  const now = new Map<string, ExecutionState>();
  const out: ExecutionState[] = [];
  for (let i = 0; i < steps; i++) {
    const id = `e-${Math.floor(r() * 150)}`;
    const before = now.get(id);
    const after: ExecutionState =
      before === undefined
        ? {
            ...initialExecutionState(id),
            jobId: `j-${id}`,
            nodeId: `n-${Math.floor(r() * 20)}`,
            computeState: "New",
            desiredState: "Pending",
            allocatedResources: {
              CPU: [0.25, 0.5, 1][Math.floor(r() * 3)] as number,
              Memory: 2 ** 20 * (1 + Math.floor(r() * 4)),
              Disk: 0,
              GPU: 0,
            },
          }
        : {
            ...before,
            computeState: COMPUTE[Math.floor(r() * COMPUTE.length)],
            desiredState: r() < 0.15 ? "Stopped" : before.desiredState,
          };
    now.set(id, after);
    out.push(after);
  }
  return out;
}

/** The ledger as JobRunner rebuilt it before each placement: every execution that holds capacity. */
function rebuilt(states: Iterable<ExecutionState>) {
  const latest = new Map<string, ExecutionState>();
  for (const s of states) latest.set(s.executionId, s);
  return ledgerOf([...latest.values()].filter(holdsCapacity).map(allocationOf));
}

describe("the runner's execution ledger, kept up to date", () => {
  it("holds after every change what a rebuild from every execution would", () => {
    const states = lives(1, 2000);
    const ledger = new ExecutionLedger();
    states.forEach((s, i) => {
      ledger.update(s);
      if (i % 10 === 0)
        expect(ledger.current().placed, `after change ${i}`).toEqual(rebuilt(states.slice(0, i + 1)).placed);
    });
    expect(ledger.current().placed).toEqual(rebuilt(states).placed);
    expect(ledger.current().placed.size).toBeGreaterThan(0);
  });

  it("after a restart, seeded from the read model's states and fed the events after them, holds the same ledger", () => {
    const states = lives(2, 2000);
    const live = new ExecutionLedger();
    for (const s of states) live.update(s);
    for (const cut of [0, 700, 1999, 2000]) {
      // The snapshot's states (the latest of each execution up to the cut), then the rest replayed.
      const seeded = new Map<string, ExecutionState>();
      for (const s of states.slice(0, cut)) seeded.set(s.executionId, s);
      const restarted = ExecutionLedger.of(seeded.values());
      for (const s of states.slice(cut)) restarted.update(s);
      expect(restarted.current().placed, `restarted at ${cut}`).toEqual(live.current().placed);
    }
  });

  it("gives a placement an immutable ledger: later changes do not reach it", () => {
    const [created] = lives(3, 1);
    const ledger = new ExecutionLedger();
    ledger.update(created as ExecutionState);
    const given = ledger.current();
    const before = given.placed;
    ledger.update({ ...(created as ExecutionState), computeState: "Completed", desiredState: "Stopped" });
    expect(given.placed).toEqual(before);
    expect(ledger.current().placed.size).toBe(0);
    expect(ledger.holding((created as ExecutionState).executionId)).toBe(false);
  });

  it("moves a hold when the state names another node or other resources", () => {
    const base = {
      ...initialExecutionState("e-1"),
      nodeId: "a",
      computeState: "Running" as const,
      desiredState: "Running" as const,
      allocatedResources: { CPU: 1, Memory: 100, Disk: 0, GPU: 0 },
    };
    const ledger = new ExecutionLedger();
    ledger.update(base);
    ledger.update({ ...base, nodeId: "b" });
    ledger.update({ ...base, nodeId: "b", allocatedResources: { CPU: 0.5, Memory: 100, Disk: 0, GPU: 0 } });
    expect(ledger.current().placed).toEqual(
      ledgerOf([{ nodeId: "b", resources: { cpuMillis: 500, memoryBytes: 100, diskBytes: 0, gpus: 0 } }]).placed,
    );
  });

  describe("reservations made at plan time", () => {
    const running = {
      ...initialExecutionState("e-1"),
      jobId: "j-1",
      nodeId: "a",
      computeState: "New" as const,
      desiredState: "Pending" as const,
      allocatedResources: { CPU: 1, Memory: 100, Disk: 0, GPU: 0 },
    };
    const planned = allocationOf(running);
    const only = (...allocations: Allocation[]) => ledgerOf(allocations).placed;

    it("holds a planned execution's allocation before the read model folds it, then the fold's, never both", () => {
      const ledger = new ExecutionLedger();
      ledger.reserve("e-1", planned);
      expect(ledger.holding("e-1")).toBe(true);
      expect(ledger.current().placed).toEqual(only(planned));
      // The read model folds the Create: the reservation is replaced, not added to.
      ledger.update(running);
      expect(ledger.current().placed).toEqual(only(planned));
      ledger.update({ ...running, computeState: "Running", desiredState: "Running" });
      expect(ledger.current().placed).toEqual(only(planned));
      ledger.update({ ...running, computeState: "Completed", desiredState: "Stopped" });
      expect(ledger.current().placed.size).toBe(0);
      expect(ledger.holding("e-1")).toBe(false);
    });

    it("replaces a reservation by what the fold says it holds (another node, other resources, or nothing)", () => {
      const ledger = new ExecutionLedger();
      ledger.reserve("e-1", planned);
      ledger.update({ ...running, nodeId: "b", allocatedResources: { CPU: 2, Memory: 100, Disk: 0, GPU: 0 } });
      expect(ledger.current().placed).toEqual(
        only({ nodeId: "b", resources: { cpuMillis: 2000, memoryBytes: 100, diskBytes: 0, gpus: 0 } }),
      );
      const ended = new ExecutionLedger();
      ended.reserve("e-1", planned);
      // Created and ended in one batch of the read model: the first fold it sees holds nothing.
      ended.update({ ...running, computeState: "Cancelled", desiredState: "Stopped" });
      expect(ended.current().placed.size).toBe(0);
    });

    it("gives a reservation back when its Create was not stored, and nothing the read model folded", () => {
      const ledger = new ExecutionLedger();
      ledger.reserve("e-1", planned);
      ledger.reserve("e-2", planned);
      ledger.forget("e-1");
      expect(ledger.holding("e-1")).toBe(false);
      expect(ledger.current().placed).toEqual(only(planned));
      // A Create that failed and was stored after all: folded before the failure is handled, it stays held.
      ledger.update({ ...running, executionId: "e-2" });
      ledger.forget("e-2");
      expect(ledger.holding("e-2")).toBe(true);
      expect(ledger.current().placed).toEqual(only(planned));
      // Forgetting what was never reserved, or twice, changes nothing.
      ledger.forget("e-1");
      ledger.forget("e-3");
      expect(ledger.current().placed).toEqual(only(planned));
    });

    it("counts an execution once when it is reserved again, folded or not (a replayed plan)", () => {
      const ledger = new ExecutionLedger();
      ledger.reserve("e-1", planned);
      ledger.reserve("e-1", planned);
      expect(ledger.current().placed).toEqual(only(planned));
      const folded = ExecutionLedger.of([running]);
      folded.reserve("e-1", { nodeId: "b", resources: planned.resources });
      expect(folded.current().placed).toEqual(only(planned));
      // What the read model folded stays the read model's: forget leaves it.
      folded.forget("e-1");
      expect(folded.current().placed).toEqual(only(planned));
    });

    it("moves a reservation not folded yet to the allocation it is planned with again (another node)", () => {
      const ledger = new ExecutionLedger();
      ledger.reserve("e-1", planned);
      const elsewhere = { nodeId: "b", resources: planned.resources };
      // A Create whose outcome was unknown kept its reservation on a; planned again, the same id goes to b.
      ledger.reserve("e-1", elsewhere);
      expect(ledger.current().placed).toEqual(only(elsewhere));
      ledger.update({ ...running, nodeId: "b" });
      expect(ledger.current().placed).toEqual(only(elsewhere));
    });

    it("reads for a job without what its own plans reserved and the read model has not folded", () => {
      const ledger = new ExecutionLedger();
      const other = { nodeId: "b", resources: planned.resources };
      ledger.reserve("e-1", planned, "j-1");
      ledger.reserve("e-2", other, "j-2");
      expect(ledger.currentFor("j-1").placed).toEqual(only(other));
      expect(ledger.currentFor("j-2").placed).toEqual(only(planned));
      expect(ledger.currentFor("j-3").placed).toEqual(only(planned, other));
      // Once folded (or forgotten) a reservation is no longer the job's own to leave out.
      ledger.update(running);
      expect(ledger.currentFor("j-1").placed).toEqual(only(planned, other));
      ledger.forget("e-2");
      expect(ledger.currentFor("j-2").placed).toEqual(only(planned));
    });

    it("holds what a rebuild would once every reservation is folded or forgotten", () => {
      const states = lives(4, 1500);
      const ledger = new ExecutionLedger();
      const r = random(5);
      const seen = new Set<string>();
      for (const s of states) {
        // Before its first state is folded, each execution is reserved; a few reservations of executions never created.
        if (!seen.has(s.executionId)) {
          seen.add(s.executionId);
          ledger.reserve(s.executionId, allocationOf(s));
          if (r() < 0.2) {
            const ghost = `ghost-${s.executionId}`;
            ledger.reserve(ghost, allocationOf(s));
            ledger.forget(ghost);
          }
        }
        ledger.update(s);
      }
      expect(ledger.current().placed).toEqual(rebuilt(states).placed);
    });
  });
});
