import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../../src/scheduler/capacity-ledger.ts";
import { placeJob, remainingPartitionCount, remainingPartitions } from "../../../src/scheduler/place-job.ts";
import { exec, job, node } from "./scheduler-fixtures.ts";

/**
 * What one placement makes and reads is bounded by the nodes, the job's executions and the batch
 * (maxPlacements), never by the job's Count: a stored Count of 10⁹ must not allocate 10⁹ of anything.
 */
describe("placement never works in the job's Count", () => {
  const nodes = Array.from({ length: 30 }, (_, i) => node(`n-${String(i).padStart(2, "0")}`));

  it("a Count of 10⁹ and three nodes: three placements on the lowest free partitions, at once", () => {
    const queue = { timeoutMs: 60_000, createdAtMs: 0, nowMs: 0 };
    const r = placeJob(job({ count: 1_000_000_000, nodes: nodes.slice(0, 3), queue }), ledgerOf([]));
    expect(r.decision).toBe("queued");
    expect(r.placements.map((p) => p.partitionIndex)).toEqual([0, 1, 2]);
    expect(r.shortfall?.requested).toBe(1_000_000_000);
  });

  it("counts and lists the free partitions from the executions, up to a maximum", () => {
    const held = [
      exec("e0", "n-a", "Running", { partitionIndex: 0 }),
      exec("e1", "n-b", "Running", { partitionIndex: 2 }),
      exec("e2", "n-c", "Running"),
    ];
    expect(remainingPartitionCount("batch", 2 ** 40, held)).toBe(2 ** 40 - 3);
    // The execution without an index holds the lowest free partition (1).
    expect(remainingPartitions("batch", 2 ** 40, held, 3)).toEqual([3, 4, 5]);
    expect(remainingPartitions("batch", 4, held, 10)).toEqual([3]);
  });

  it("maxPlacements: a batch job makes that many; the rest, deferred, are no shortfall (nodes were found)", () => {
    const r = placeJob(job({ count: 25, nodes, maxPlacements: 20 }), ledgerOf([]));
    expect(r.decision).toBe("placed");
    expect(r.placements).toHaveLength(20);
    expect(r.placements.map((p) => p.partitionIndex)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(r.deferred).toBe(5);
  });

  it("maxPlacements: a daemon job on a large fleet makes that many, the rest deferred", () => {
    const r = placeJob(job({ type: "daemon", count: 0, nodes, maxPlacements: 20 }), ledgerOf([]));
    expect(r.placements).toHaveLength(20);
    expect(r.deferred).toBe(10);
  });

  it("maxPlacements: a job short of nodes still says so, with what it could place", () => {
    const queue = { timeoutMs: 60_000, createdAtMs: 0, nowMs: 0 };
    const r = placeJob(job({ count: 1000, nodes, maxPlacements: 20, queue }), ledgerOf([]));
    expect(r.decision).toBe("queued");
    expect(r.placements).toHaveLength(20);
    expect(r.deferred).toBe(10);
    expect(r.message).toMatch(/^not enough nodes to run job\. requested: 1000, available: 30, suitable: 30\./);
  });
});
