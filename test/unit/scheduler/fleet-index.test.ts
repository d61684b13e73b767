import { describe, expect, it } from "vitest";
import { ledgerOf, release, type Allocation, type CapacityLedger } from "../../../src/scheduler/capacity-ledger.ts";
import { FleetIndex } from "../../../src/scheduler/fleet/fleet-index.ts";
import { placeJob, type PlacementResult } from "../../../src/scheduler/place-job.ts";
import type {
  CandidateNode,
  ConstraintRequirement,
  ExistingExecution,
  PlacementRequest,
} from "../../../src/scheduler/placement-request.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { GB, exec, job, node, res } from "./scheduler-fixtures.ts";

type Random = ReturnType<typeof seededRandom>;

const ZONES = ["a", "b", "c", "d"];
const ENGINES: readonly (readonly string[])[] = [
  ["docker"],
  ["docker"],
  ["docker"],
  ["Docker"],
  ["wasm"],
  ["docker", "wasm"],
];

function randomLabels(r: Random): Record<string, string> {
  return {
    zone: r.pick(ZONES),
    rack: `r${r.int(8)}`,
    ...(r.int(4) === 0 ? { spot: "true" } : {}),
    ...(r.int(3) === 0 ? { gpus: String(r.int(5)) } : {}),
    ...(r.int(10) === 0 ? { tier: "rare" } : {}),
  };
}

function randomNode(r: Random, id: string): CandidateNode {
  const cpu = r.pick([0, 1000, 2000, 4000, 8000, 8000]);
  return node(id, {
    type: r.int(20) === 0 ? "Requester" : "Compute",
    membership: r.pick(["APPROVED", "APPROVED", "APPROVED", "APPROVED", "PENDING", "REJECTED"] as const),
    health: r.pick(["HEALTHY", "HEALTHY", "HEALTHY", "HEALTHY", "UNHEALTHY", "UNKNOWN"] as const),
    labels: randomLabels(r),
    engines: r.pick(ENGINES),
    capacity: res(cpu, r.pick([2, 4, 8, 16]) * GB, r.pick([0, 50, 100]) * GB, r.pick([0, 0, 1, 2])),
    ...(r.int(6) === 0 ? { maxJobRequirements: res(1000, 2 * GB, 50 * GB, 1) } : {}),
    ...(r.int(12) === 0 ? { cordoned: { reason: r.pick(["", "maintenance"]) } } : {}),
    ...(r.int(15) === 0 ? { unschedulable: "node is draining" } : {}),
  });
}

/** One change a node read model can make to a node: what the index must follow. */
function changed(r: Random, before: CandidateNode): CandidateNode {
  switch (r.int(7)) {
    case 0:
      return { ...before, labels: randomLabels(r) };
    case 1:
      return { ...before, health: before.health === "HEALTHY" ? r.pick(["UNHEALTHY", "UNKNOWN"] as const) : "HEALTHY" };
    case 2:
      return { ...before, membership: before.membership === "APPROVED" ? "PENDING" : "APPROVED" };
    case 3: {
      const { cordoned: _c, ...rest } = before;
      return before.cordoned === undefined ? { ...before, cordoned: { reason: "maintenance" } } : rest;
    }
    case 4: {
      const { unschedulable: _u, ...rest } = before;
      return before.unschedulable === undefined ? { ...before, unschedulable: "node is draining" } : rest;
    }
    case 5:
      return { ...before, capacity: res(r.pick([0, 1000, 4000, 16000]), r.pick([2, 8]) * GB, 100 * GB) };
    default:
      // Equal in every field placement reads, a new object (a node event that changes none of them).
      return { ...before, labels: { ...before.labels } };
  }
}

const TERMS: readonly ((r: Random) => ConstraintRequirement)[] = [
  (r) => ({ key: "zone", operator: r.pick(["=", "=="]), values: [r.pick(ZONES)] }),
  (r) => ({ key: "zone", operator: "in", values: [r.pick(ZONES), r.pick(ZONES)] }),
  (r) => ({ key: "rack", operator: "in", values: [`r${r.int(8)}`, `r${r.int(8)}`, "r-none"] }),
  (r) => ({ key: "zone", operator: "!=", values: [r.pick(ZONES)] }),
  (r) => ({ key: "rack", operator: "notin", values: [`r${r.int(8)}`] }),
  () => ({ key: "spot", operator: "exists", values: [] }),
  () => ({ key: "spot", operator: "!", values: [] }),
  (r) => ({ key: "gpus", operator: r.pick(["gt", "lt"]), values: [String(r.int(4))] }),
  () => ({ key: "tier", operator: "=", values: ["rare"] }),
  () => ({ key: "missing", operator: "=", values: ["x"] }),
  (r) => ({ key: "favour_zone", operator: "=", values: [r.pick(ZONES)] }),
  () => ({ key: "favour_spot", operator: "exists", values: [] }),
];

function randomJob(r: Random, step: number, ids: readonly string[]): Omit<PlacementRequest, "nodes"> {
  const type = r.pick(["batch", "batch", "batch", "service", "ops", "daemon"] as const);
  const constraints = Array.from({ length: r.int(3) }, () => r.pick(TERMS)(r));
  const executions: ExistingExecution[] = [];
  for (let i = r.int(4); i > 0; i--)
    executions.push(
      exec(`e-${step}-${i}`, r.pick(ids), r.pick(["Running", "Failed", "Completed", "AskForBidRejected"] as const), {
        partitionIndex: r.int(3),
      }),
    );
  const queues = r.int(2) === 0;
  return {
    ...job({
      jobId: `j-${step}`,
      type,
      count: 1 + r.int(5),
      constraints,
      engine: r.pick(["docker", "docker", "DOCKER", "wasm", "none"]),
      resources: res(
        r.pick([0, 250, 500, 1000, 3000]),
        r.pick([0, 1, 2]) * GB,
        r.pick([0, 10]) * GB,
        r.int(4) === 0 ? 1 : 0,
      ),
      executions,
      queue: { timeoutMs: queues ? 60_000 : 0, createdAtMs: 1_000, nowMs: 2_000 },
    }),
    ...(r.int(4) === 0 ? { maxPlacements: 1 + r.int(3) } : {}),
  };
}

/** Everything a placement decides and says, the verdicts of every node included. */
function outcome(result: PlacementResult) {
  return {
    decision: result.decision,
    placements: result.placements,
    message: result.message,
    shortfall: result.shortfall,
    jobQueued: result.jobQueued,
    deferred: result.deferred,
    ledger: result.ledger.placed,
    nodes: result.nodes,
  };
}

describe("placement over the fleet index", () => {
  // Small fleets, and fleets larger than the freest nodes PeakFree keeps per ledger base (its leaders).
  for (const [seed, least, most] of [
    [1, 40, 200],
    [2, 40, 200],
    [3, 40, 200],
    [4, 40, 200],
    [5, 40, 200],
    [6, 40, 200],
    [7, 300, 1500],
    [8, 300, 1500],
    [9, 300, 1500],
  ] as const) {
    it(`decides and says what placement over the whole node list does, as nodes change (random fleets of ${least}–${most}, seed ${seed})`, () => {
      const r = seededRandom(seed);
      const index = new FleetIndex();
      /** The node list as the read model would give it, kept apart from the index. */
      const model = new Map<string, CandidateNode>();
      const size = least + r.int(most - least);
      for (let i = 0; i < size; i++) {
        const n = randomNode(r, `n-${String(r.int(1e6)).padStart(6, "0")}-${i}`);
        model.set(n.id, n);
        index.update(n.id, n);
      }
      const ids = [...model.keys()];
      // A busy fleet: a ledger with a base over many nodes, so that placements add changes to it and fold them.
      let ledger: CapacityLedger = ledgerOf(
        Array.from({ length: size * 2 }, () => ({ nodeId: r.pick(ids), resources: res(r.pick([250, 500]), GB) })),
      );
      const held: Allocation[][] = [];
      let fast = 0;
      for (let step = 0; step < 400; step++) {
        if (r.int(4) === 0) {
          const id = r.pick(ids);
          const before = model.get(id);
          const after = before === undefined ? randomNode(r, id) : r.int(8) === 0 ? undefined : changed(r, before);
          if (after === undefined) model.delete(id);
          else model.set(id, after);
          index.update(id, after);
          continue;
        }
        if (held.length > 0 && r.int(3) === 0) ledger = release(ledger, held.splice(r.int(held.length), 1)[0] ?? []);
        const request = randomJob(r, step, ids);
        const view = index.view();
        expect(view.size).toBe(model.size);
        const fromList = placeJob({ ...request, nodes: [...model.values()] }, ledger);
        const fromFleet = placeJob({ ...request, nodes: view }, ledger);
        if (fromFleet.decision === "placed" && fromFleet.placements.length > 0) fast++;
        expect(outcome(fromFleet)).toEqual(outcome(fromList));
        ledger = fromFleet.ledger;
        held.push(fromFleet.placements.map((p) => ({ nodeId: p.nodeId, resources: p.resources })));
      }
      // The comparison covered jobs that found their nodes, not only shortfalls (which judge every node anyway).
      expect(fast).toBeGreaterThan(30);
    });
  }

  it("ranks nodes of equal free capacity by id across the whole fleet, not among the first it looks at", () => {
    const index = new FleetIndex();
    const nodes: CandidateNode[] = [];
    // Ids falling as they are added: the index meets the best ones by id last.
    for (let i = 999; i >= 0; i--)
      nodes.push(
        node(`n-${String(i).padStart(4, "0")}`, { capacity: res(4000, 8 * GB), labels: { zone: `z${i % 4}` } }),
      );
    for (const n of nodes) index.update(n.id, n);
    const ledger = ledgerOf([{ nodeId: "n-0001", resources: res(1000) }]);
    for (const count of [1, 3, 20]) {
      const request = job({ count, resources: res(500, GB) });
      const fromFleet = placeJob({ ...request, nodes: index.view() }, ledger);
      expect(fromFleet.placements).toEqual(placeJob({ ...request, nodes }, ledger).placements);
      expect(fromFleet.placements[0]?.nodeId).toBe("n-0000");
      // Narrowed to a quarter of the fleet: its own freest nodes are weighed and walked the same way.
      const narrowed = { ...request, constraints: [{ key: "zone", operator: "=", values: ["z3"] }] };
      const fromIndex = placeJob({ ...narrowed, nodes: index.view() }, ledger);
      expect(fromIndex.placements).toEqual(placeJob({ ...narrowed, nodes }, ledger).placements);
      expect(fromIndex.placements[0]?.nodeId).toBe("n-0003");
    }
  });

  it("judges only the smallest set the job names: open nodes with a label value it asks for, or running its engine", () => {
    const r = seededRandom(11);
    const index = new FleetIndex();
    const nodes = Array.from({ length: 1000 }, (_, i) => randomNode(r, `n-${String(i).padStart(4, "0")}`));
    for (const n of nodes) index.update(n.id, n);
    const open = (n: CandidateNode) =>
      n.type === "Compute" &&
      n.membership === "APPROVED" &&
      n.health === "HEALTHY" &&
      n.cordoned === undefined &&
      n.unschedulable === undefined;
    const docker = (n: CandidateNode) => open(n) && n.engines.some((e) => e.toLowerCase() === "docker");
    const ids = (list: readonly CandidateNode[]) => list.map((n) => n.id).sort();
    const zoneB = { key: "zone", op: "in" as const, values: ["b"] };
    const rare = { key: "tier", op: "in" as const, values: ["rare"] };
    expect(ids(index.candidates("docker", [zoneB]))).toEqual(
      ids(nodes.filter((n) => open(n) && n.labels.zone === "b")),
    );
    // The smallest set of the job's terms: the rare tier, not the zone.
    expect(ids(index.candidates("docker", [zoneB, rare]))).toEqual(
      ids(nodes.filter((n) => open(n) && n.labels.tier === "rare")),
    );
    expect(index.candidates("docker", [zoneB, rare]).length).toBeLessThan(60);
    // Terms that cannot narrow (a negation) leave the engine's open nodes.
    expect(ids(index.candidates("docker", [{ key: "spot", op: "doesnotexist" }]))).toEqual(ids(nodes.filter(docker)));
    expect(index.candidates("docker", [{ key: "missing", op: "exists" }])).toEqual([]);
    expect(index.candidates("none", [])).toEqual([]);
  });

  it("follows a node's changes: labels, health, approval, cordon, deletion and return", () => {
    const index = new FleetIndex();
    const a = node("n-a", { labels: { zone: "a" } });
    index.update("n-a", a);
    index.update("n-b", node("n-b", { labels: { zone: "b" } }));
    const zone = (v: string) => index.candidates("docker", [{ key: "zone", op: "in", values: [v] }]).map((n) => n.id);
    expect(zone("a")).toEqual(["n-a"]);
    index.update("n-a", { ...a, labels: { zone: "b" } });
    expect(zone("a")).toEqual([]);
    expect(zone("b").sort()).toEqual(["n-a", "n-b"]);
    index.update("n-a", { ...a, health: "UNHEALTHY" });
    expect(zone("a")).toEqual([]);
    index.update("n-a", { ...a, health: "HEALTHY" });
    expect(zone("a")).toEqual(["n-a"]);
    index.update("n-a", { ...a, membership: "PENDING" });
    expect(zone("a")).toEqual([]);
    index.update("n-a", { ...a, cordoned: { reason: "" } });
    expect(zone("a")).toEqual([]);
    index.update("n-a", a);
    expect(zone("a")).toEqual(["n-a"]);
    index.update("n-a", undefined);
    expect(zone("a")).toEqual([]);
    expect(
      index
        .view()
        .list()
        .map((n) => n.id),
    ).toEqual(["n-b"]);
    index.update("n-a", a);
    // A node that comes back keeps its place in the list.
    expect(
      index
        .view()
        .list()
        .map((n) => n.id),
    ).toEqual(["n-a", "n-b"]);
  });

  it("keeps a view as it was taken: a placement given it after the fleet changed judges the nodes it holds", () => {
    const index = new FleetIndex();
    index.update("n-a", node("n-a"));
    const view = index.view();
    expect(index.view()).toBe(view);
    index.update("n-a", node("n-a", { health: "UNHEALTHY" }));
    index.update("n-b", node("n-b"));
    expect(view.list()).toEqual([node("n-a")]);
    const request = job({ nodes: view });
    expect(placeJob(request, ledgerOf([])).placements.map((p) => p.nodeId)).toEqual(["n-a"]);
    expect(placeJob({ ...request, nodes: index.view() }, ledgerOf([])).placements.map((p) => p.nodeId)).toEqual([
      "n-b",
    ]);
  });

  it("refuses a fleet with a node whose numbers placement cannot use, as it refuses such a list", () => {
    const index = new FleetIndex();
    const bad = node("n-bad", { capacity: res(1000, 1e300) });
    index.update("n-ok", node("n-ok"));
    index.update("n-bad", bad);
    const request = job({ nodes: index.view() });
    expect(() => placeJob(request, ledgerOf([]))).toThrow(/node n-bad capacity: memoryBytes must be a whole number/);
    index.update("n-bad", undefined);
    expect(placeJob({ ...request, nodes: index.view() }, ledgerOf([])).decision).toBe("placed");
  });
});
