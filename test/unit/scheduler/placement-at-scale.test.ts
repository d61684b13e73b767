import { describe, expect, it } from "vitest";
import {
  EMPTY_LEDGER,
  ledgerOf,
  placedOn,
  release,
  reserve,
  type Allocation,
  type CapacityLedger,
} from "../../../src/scheduler/capacity-ledger.ts";
import { jobSelectors } from "../../../src/scheduler/job-constraints.ts";
import { judgeNodes, rankOrder } from "../../../src/scheduler/node-verdicts.ts";
import { placeJob } from "../../../src/scheduler/place-job.ts";
import type { NodeView } from "../../../src/projections/node-view.ts";
import { candidateNodeOf } from "../../../src/scheduler/candidate-node.ts";
import type { CandidateNode, JobType } from "../../../src/scheduler/placement-request.ts";
import { NO_RESOURCES, addResources, subtractResources, type Resources } from "../../../src/scheduler/resources.ts";
import { GB, exec, job, node, res } from "./scheduler-fixtures.ts";

/** Deterministic, so a failure is reproduced by running the test again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function fleet(size: number, r: () => number): CandidateNode[] {
  return Array.from({ length: size }, (_, i) =>
    node(`n-${String(Math.floor(r() * 1e6)).padStart(6, "0")}-${i}`, {
      membership: r() < 0.05 ? "PENDING" : "APPROVED",
      health: r() < 0.05 ? "UNHEALTHY" : "HEALTHY",
      labels: { zone: `z${i % 3}`, ...(r() < 0.3 ? { spot: "true" } : {}) },
      capacity: res(r() < 0.2 ? 0 : 1000 * (1 + Math.floor(r() * 4)), 4 * GB, 100 * GB),
    }),
  );
}

describe("the capacity ledger, persistent", () => {
  it("holds what a plain map would through thousands of reserves and releases, and every earlier ledger stays as it was", () => {
    const r = random(1);
    const ids = Array.from({ length: 300 }, (_, i) => `n${i}`);
    let ledger: CapacityLedger = EMPTY_LEDGER;
    const model = new Map<string, Resources>();
    const history: { ledger: CapacityLedger; snapshot: Map<string, Resources> }[] = [];
    for (let step = 0; step < 3000; step++) {
      const batch: Allocation[] = Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
        nodeId: ids[Math.floor(r() * ids.length)] as string,
        resources: res(250 * (1 + Math.floor(r() * 4)), GB),
      }));
      const giveBack = r() < 0.45;
      ledger = giveBack ? release(ledger, batch) : reserve(ledger, batch);
      for (const a of batch) {
        const next = giveBack
          ? subtractResources(model.get(a.nodeId) ?? NO_RESOURCES, a.resources)
          : addResources(model.get(a.nodeId) ?? NO_RESOURCES, a.resources);
        if (next.cpuMillis === 0 && next.memoryBytes === 0) model.delete(a.nodeId);
        else model.set(a.nodeId, next);
      }
      if (step % 7 === 0) history.push({ ledger, snapshot: new Map(model) });
    }
    for (const { ledger: then, snapshot } of history) {
      expect(then.placed).toEqual(snapshot);
      for (const id of ids) expect(placedOn(then, id)).toEqual(snapshot.get(id) ?? NO_RESOURCES);
    }
    expect(ledger.placed).toEqual(model);
  });

  it("is built in one pass from allocations that add up, a node at zero left out", () => {
    const ledger = ledgerOf([
      { nodeId: "a", resources: res(500) },
      { nodeId: "a", resources: res(250, GB) },
      { nodeId: "b", resources: res(0) },
    ]);
    expect(ledger.placed).toEqual(new Map([["a", res(750, GB)]]));
  });
});

describe("placement at scale", () => {
  const types: JobType[] = ["batch", "service", "ops", "daemon"];

  it("places on the best-ranked suitable nodes, exactly as sorting every node's verdict would", () => {
    const r = random(2);
    for (let round = 0; round < 60; round++) {
      const nodes = fleet(20 + Math.floor(r() * 80), r);
      const type = types[round % types.length] as JobType;
      // Counts on both sides of the one-pass pick (up to 16) and the full sort.
      const count = 1 + Math.floor(r() * 30);
      const constraints =
        round % 3 === 0
          ? [{ key: "zone", operator: "!=", values: ["z1"] }]
          : round % 3 === 1
            ? [{ key: "favour_spot", operator: "exists", values: [] }]
            : [];
      const ledger = ledgerOf(
        nodes.filter(() => r() < 0.4).map((n) => ({ nodeId: n.id, resources: res(1000 * Math.floor(r() * 3)) })),
      );
      const executions = nodes
        .filter(() => r() < 0.1)
        .map((n, i) => exec(`e${i}`, n.id, r() < 0.5 ? "Failed" : "Running", { partitionIndex: count + i }));
      // Within its QueueTimeout: a job short of nodes is placed in part, so every round places something to compare.
      const queue = { timeoutMs: 60_000, createdAtMs: 0, nowMs: 1 };
      const request = job({
        type,
        count,
        nodes,
        constraints,
        executions,
        queue,
        resources: res(500 * (1 + Math.floor(r() * 3)), GB),
      });
      const result = placeJob(request, ledger);
      const ranked = judgeNodes(request, jobSelectors(constraints), ledger)
        .filter((v) => v.suitable)
        .sort(rankOrder)
        .map((v) => v.nodeId);
      // No execution holds a partition (their indices are past Count): a batch or service job wants Count nodes.
      const expected = type === "batch" || type === "service" ? ranked.slice(0, count) : ranked;
      expect(
        result.placements.map((p) => p.nodeId),
        `round ${round}`,
      ).toEqual(expected);
    }
  });

  it("is pure: the same request and ledger give the same result, and the ledger given stays as it was", () => {
    const r = random(3);
    const nodes = fleet(200, r);
    const ledger = ledgerOf(nodes.slice(0, 120).map((n) => ({ nodeId: n.id, resources: res(1000) })));
    const before = ledger.placed;
    for (const count of [3, 150]) {
      const request = job({
        count,
        nodes,
        constraints: [{ key: "spot", operator: "!", values: [] }],
        queue: { timeoutMs: 60_000, createdAtMs: 0, nowMs: 1 },
      });
      const first = placeJob(request, ledger);
      const again = placeJob(request, ledger);
      expect(again).toEqual(first);
      expect(again.nodes).toEqual(first.nodes);
      expect(again.message).toBe(first.message);
      expect(ledger.placed).toEqual(before);
      for (const p of first.placements)
        expect(placedOn(first.ledger, p.nodeId)).toEqual(addResources(placedOn(ledger, p.nodeId), p.resources));
    }
  });

  it("threads the ledger through thousands of placements on a 2,000-node fleet without overbooking a node", () => {
    const r = random(4);
    const nodes = fleet(2000, r);
    let ledger: CapacityLedger = EMPTY_LEDGER;
    const held: Allocation[][] = [];
    for (let i = 0; i < 1500; i++) {
      const result = placeJob(
        job({
          jobId: `j-${i}`,
          count: 1 + (i % 4),
          nodes,
          resources: res(250 * (1 + (i % 3)), GB / 4),
          queue: { timeoutMs: 60_000, createdAtMs: 0, nowMs: 0 },
        }),
        ledger,
      );
      ledger = result.ledger;
      held.push(result.placements.map((p) => ({ nodeId: p.nodeId, resources: p.resources })));
      if (i % 3 === 0) ledger = release(ledger, held.shift() ?? []);
    }
    for (const n of nodes) {
      const on = placedOn(ledger, n.id);
      expect(on.cpuMillis <= n.capacity.cpuMillis && on.memoryBytes <= n.capacity.memoryBytes, n.id).toBe(true);
    }
    // The threaded ledger is the one rebuilt from the allocations still held.
    expect(ledger.placed).toEqual(ledgerOf(held.flat()).placed);
  });
});

describe("candidates from the node read model", () => {
  const view = (over: Partial<NodeView> = {}): NodeView =>
    ({
      nodeId: "n-a",
      nodeType: "Compute",
      membership: "APPROVED",
      health: "HEALTHY",
      info: {
        NodeID: "n-a",
        NodeType: "Compute",
        Labels: { zone: "a" },
        ComputeNodeInfo: { ExecutionEngines: ["docker"], MaxCapacity: { CPU: 2, Memory: 4 * GB, Disk: 0, GPU: 0 } },
      },
      labelOverrides: {},
      ...over,
    }) as unknown as NodeView;

  it("makes each view a candidate once, and a changed view (a new one) a new candidate", () => {
    const first = view();
    expect(candidateNodeOf(first)).toBe(candidateNodeOf(first));
    const unhealthy = { ...first, health: "UNHEALTHY" } as NodeView;
    expect(candidateNodeOf(unhealthy)).not.toBe(candidateNodeOf(first));
    expect(candidateNodeOf(unhealthy).health).toBe("UNHEALTHY");
    expect(candidateNodeOf(first).health).toBe("HEALTHY");
    expect(candidateNodeOf(view({ nodeId: "n-b" })).id).toBe("n-b");
  });
});
