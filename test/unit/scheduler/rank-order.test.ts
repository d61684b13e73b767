import { describe, expect, it } from "vitest";
import {
  ledgerOf,
  release,
  reserve,
  type Allocation,
  type CapacityLedger,
} from "../../../src/scheduler/capacity-ledger.ts";
import { FleetIndex } from "../../../src/scheduler/fleet/fleet-index.ts";
import { jobSelectors } from "../../../src/scheduler/job-constraints.ts";
import { capacityWeights, weightedFree } from "../../../src/scheduler/node-verdicts.ts";
import { placeJob } from "../../../src/scheduler/place-job.ts";
import type {
  CandidateNode,
  ConstraintRequirement,
  PlacementRequest,
} from "../../../src/scheduler/placement-request.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { GB, job, node, res } from "./scheduler-fixtures.ts";

type Random = ReturnType<typeof seededRandom>;

/** A few machine shapes: most nodes are alike in everything placement reads. */
const SHAPES = [
  res(8000, 32 * GB, 200 * GB),
  res(8000, 32 * GB, 200 * GB),
  res(32000, 128 * GB, 1000 * GB),
  res(2000, 4 * GB, 50 * GB),
];
const ZONES = ["a", "b", "c"];

/** Ids in no order the index meets them in: the lowest ids come anywhere. */
const idOf = (r: Random, i: number) => `n-${String(r.int(1e6)).padStart(6, "0")}-${i}`;

function alikeNode(r: Random, id: string, shapes: number): CandidateNode {
  return node(id, {
    capacity: SHAPES[r.int(shapes)] as CandidateNode["capacity"],
    labels: { zone: r.pick(ZONES), ...(r.int(5) === 0 ? { spot: "true" } : {}) },
    // Now and then a node no job can take, or only some can.
    ...(r.int(40) === 0 ? { health: "UNHEALTHY" as const } : {}),
    ...(r.int(40) === 0 ? { cordoned: { reason: "" } } : {}),
    ...(r.int(30) === 0 ? { engines: ["wasm"] } : {}),
    ...(r.int(30) === 0 ? { maxJobRequirements: res(500, GB) } : {}),
  });
}

/** Small executions on a few nodes (most stay idle and alike), some of them as changes the ledger has not folded. */
function randomLedger(r: Random, ids: readonly string[]): CapacityLedger {
  const unit = () => res(r.pick([250, 500, 1000]), r.pick([1, 2]) * GB);
  const held: Allocation[] = Array.from({ length: r.int(ids.length / 4) }, () => ({
    nodeId: r.pick(ids),
    resources: unit(),
  }));
  let ledger = ledgerOf(held);
  for (let i = r.int(40); i > 0; i--) {
    const a = r.int(3) === 0 && held.length > 0 ? [held[r.int(held.length)] as Allocation] : undefined;
    ledger = a !== undefined ? release(ledger, a) : reserve(ledger, [{ nodeId: r.pick(ids), resources: unit() }]);
  }
  return ledger;
}

const TERMS: readonly ((r: Random) => ConstraintRequirement)[] = [
  (r) => ({ key: "zone", operator: "=", values: [r.pick(ZONES)] }),
  (r) => ({ key: "zone", operator: "in", values: [r.pick(ZONES), r.pick(ZONES)] }),
  () => ({ key: "spot", operator: "!", values: [] }),
  (r) => ({ key: "zone", operator: "!=", values: [r.pick(ZONES)] }),
];

function randomRequest(r: Random, step: number): Omit<PlacementRequest, "nodes"> {
  return job({
    jobId: `j-${step}`,
    count: 1 + r.int(5),
    constraints: Array.from({ length: r.int(2) }, () => r.pick(TERMS)(r)),
    resources: res(r.pick([10, 250, 1000, 6000]), r.pick([0, 16e6, GB, 20 * GB]), r.pick([0, 10 * GB])),
  });
}

/**
 * `size` nodes, n-00000 upwards (`nodeOf` makes each from its id and number), added to an index highest id first, that
 * count how many placement judges: judging a node reads its engines, which the index read once, as each was added.
 */
function countedFleet(size: number, nodeOf: (id: string, i: number) => CandidateNode) {
  const index = new FleetIndex();
  const count = { judged: 0 };
  const nodes: CandidateNode[] = [];
  for (let i = size - 1; i >= 0; i--) {
    const n = nodeOf(`n-${String(i).padStart(5, "0")}`, i);
    const engines = n.engines;
    nodes.push(
      Object.defineProperty({ ...n }, "engines", {
        enumerable: true,
        get: () => {
          count.judged++;
          return engines;
        },
      }) as CandidateNode,
    );
  }
  for (const n of nodes) index.update(n.id, n);
  return { index, nodes, count };
}

describe("placement among many nodes alike", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`reads the job's candidates in judge's order, capacity rank then id, as sorting them all would (seed ${seed})`, () => {
      const r = seededRandom(seed);
      const index = new FleetIndex();
      const size = 50 + r.int(2000);
      const ids: string[] = [];
      for (let i = 0; i < size; i++) {
        const n = alikeNode(r, idOf(r, i), 1 + r.int(SHAPES.length));
        ids.push(n.id);
        index.update(n.id, n);
      }
      for (let step = 0; step < 20; step++) {
        // Nodes join between placements, their ids anywhere among the others'.
        for (let j = r.int(3); j > 0; j--) {
          const n = alikeNode(r, idOf(r, size + 10 * step + j), 1 + r.int(SHAPES.length));
          ids.push(n.id);
          index.update(n.id, n);
        }
        const ledger = randomLedger(r, ids);
        const request = randomRequest(r, step);
        const required = jobSelectors(request.constraints).required.requirements;
        const weights = capacityWeights(request.resources);
        const peak = index.peakFree(weights, ledger);
        const next = index.rankOrder("docker", required, weights, ledger, peak, Infinity);
        if (next === undefined) throw new Error("the index could not say");
        const read: string[] = [];
        for (let n = next(); n != null; n = next()) read.push(n.id);
        const rank = (n: CandidateNode) =>
          Math.floor((weightedFree(n.capacity, ledger.held(n.id), weights) / peak) * 100);
        const sorted = index
          .candidates("docker", required)
          .map((n) => ({ id: n.id, rank: rank(n) }))
          .sort((a, b) => b.rank - a.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((n) => n.id);
        expect(read).toEqual(sorted);
      }
    });
  }

  for (const [seed, least, most] of [
    [11, 100, 600],
    [12, 100, 600],
    [13, 100, 600],
    [14, 1000, 3000],
    [15, 1000, 3000],
  ] as const) {
    it(`places as judging the whole fleet does, ledger threaded, nodes changing (fleets of ${least}–${most}, seed ${seed})`, () => {
      const r = seededRandom(seed);
      const index = new FleetIndex();
      const model = new Map<string, CandidateNode>();
      const size = least + r.int(most - least);
      const shapes = 1 + r.int(2);
      for (let i = 0; i < size; i++) {
        const n = alikeNode(r, idOf(r, i), shapes);
        model.set(n.id, n);
        index.update(n.id, n);
      }
      const ids = [...model.keys()];
      let ledger = randomLedger(r, ids);
      const held: Allocation[][] = [];
      for (let step = 0; step < 150; step++) {
        if (r.int(10) === 0) {
          // A node that joins (its id anywhere among the others'), or one that changes or goes.
          const id = r.int(3) === 0 ? idOf(r, size + step) : r.pick(ids);
          if (!ids.includes(id)) ids.push(id);
          const after = r.int(4) === 0 ? undefined : alikeNode(r, id, shapes);
          if (after === undefined) model.delete(id);
          else model.set(id, after);
          index.update(id, after);
        }
        if (held.length > 0 && r.int(2) === 0) ledger = release(ledger, held.splice(r.int(held.length), 1)[0] ?? []);
        const request = randomRequest(r, step);
        const fromList = placeJob({ ...request, nodes: [...model.values()] }, ledger);
        const fromFleet = placeJob({ ...request, nodes: index.view() }, ledger);
        expect(fromFleet.placements).toEqual(fromList.placements);
        expect([fromFleet.decision, fromFleet.message]).toEqual([fromList.decision, fromList.message]);
        ledger = fromFleet.ledger;
        held.push(fromFleet.placements.map((p) => ({ nodeId: p.nodeId, resources: p.resources })));
      }
    });
  }

  it("reads ties by id where the walk cannot conclude among nodes all unlike: each in a class of its own, ranks equal", () => {
    // Each a little different in CPU, the same in memory: a memory-heavy job ranks them all alike.
    const { index, nodes, count } = countedFleet(3_000, (id, i) =>
      node(id, { capacity: res(8000 + ((i * 7919) % 3000), 32 * GB) }),
    );
    let ledger = ledgerOf([]);
    for (let step = 0; step < 5; step++) {
      const request = job({ jobId: `j-${step}`, count: 2, resources: res(1, 2 * GB) });
      count.judged = 0;
      const fromFleet = placeJob({ ...request, nodes: index.view() }, ledger);
      const walked = count.judged;
      expect(fromFleet.placements).toEqual(placeJob({ ...request, nodes }, ledger).placements);
      // The walk's 1,344, then a few in rank order: not the 3,000 a whole judging would read.
      expect(walked).toBeLessThan(1_400);
      ledger = fromFleet.ledger;
    }
  });

  it("judges a few of 10,000 identical nodes per placement, not all of them, and takes the lowest ids", () => {
    const { index, nodes, count } = countedFleet(10_000, (id, i) =>
      node(id, { capacity: res(8000, 32 * GB, 200 * GB), labels: { sim: "true", zone: `z${i % 4}` } }),
    );
    let ledger = ledgerOf([]);
    for (let step = 0; step < 20; step++) {
      const request = job({ jobId: `j-${step}`, count: 3, resources: res(10, 16e6) });
      count.judged = 0;
      const result = placeJob({ ...request, nodes: index.view() }, ledger);
      // Idle nodes rank above busy ones: each job takes the next three ids.
      expect(result.placements.map((p) => p.nodeId)).toEqual(
        [0, 1, 2].map((k) => `n-${String(3 * step + k).padStart(5, "0")}`),
      );
      expect(count.judged).toBeLessThanOrEqual(16);
      ledger = result.ledger;
    }
    // A job narrowed to one zone (2,500 nodes alike): its freest 64 cannot settle the tie, rank order does.
    for (let step = 0; step < 10; step++) {
      const request = job({
        jobId: `j-zone-${step}`,
        count: 2,
        constraints: [{ key: "zone", operator: "=", values: ["z1"] }],
        resources: res(10, 16e6),
      });
      count.judged = 0;
      const result = placeJob({ ...request, nodes: index.view() }, ledger);
      expect(count.judged).toBeLessThanOrEqual(64 + 16);
      expect(result.placements).toEqual(placeJob({ ...request, nodes }, ledger).placements);
      ledger = result.ledger;
    }
  });
});
