import { describe, expect, it } from "vitest";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { ledgerOf } from "../../../src/scheduler/capacity-ledger.ts";
import { holdsCapacity } from "../../../src/scheduler/holds-capacity.ts";
import { ExecutionLedger, allocationOf } from "../../../src/workflows/jobs/execution-ledger.ts";

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
});
