import { describe, expect, it } from "vitest";
import { queryNodes, type ListNodesQuery } from "../../../src/api/nodes/node-query.ts";
import { toNodeState, type NodeState } from "../../../src/api/nodes/node-state.ts";
import { NodeStateJson } from "../../../src/api/nodes/node-state-json.ts";
import type { LiveView } from "../../../src/actors/node-manager.ts";
import { resolveNodeId } from "../../../src/actors/resolve-node-id.ts";
import type { Health, Membership, ResourceReport } from "../../../src/events/catalog/node-info.ts";
import { MIN_SCAN, NodeIndex, SCAN_PER_NODE } from "../../../src/projections/node-index/node-index.ts";
import type { SortKey } from "../../../src/projections/node-index/sorted-entries.ts";
import { matchesLabels, parseLabelSelector, type LabelSelector } from "../../../src/labels/label-selector.ts";
import type { NodeView } from "../../../src/projections/node-view.ts";
import { NodeViews } from "../../../src/projections/node-views.ts";
import { drainUnderWay } from "../../support/drain-under-way.ts";
import { naiveQueryNodes } from "../../support/naive-node-query.ts";
import { seededRandom } from "../../support/seeded-random.ts";

type Random = ReturnType<typeof seededRandom>;

const MEMBERSHIPS: Membership[] = ["PENDING", "APPROVED", "REJECTED"];
const HEALTHS: Health[] = ["HEALTHY", "UNHEALTHY", "UNKNOWN"];
const ORDERS = [
  "",
  "id",
  "type",
  "approval",
  "status",
  "available_cpu",
  "available_memory",
  "available_disk",
  "available_gpu",
] as const;
const TERMS = [
  ...[
    "zone=a",
    "zone==b",
    "zone in (a,c)",
    "zone!=a",
    "zone notin (b,c)",
    "gpu",
    "!gpu",
    "rack=r1",
    "rack in (r2,r9)",
    "tier=rare",
    "tier",
    "!rack",
    "none=x",
  ],
  // Terms few nodes match through their complement (spot is on almost every node), and ones that rule out a whole key.
  ...[
    "!spot",
    "spot!=true",
    "spot notin (true,x)",
    "spot",
    "spot=true",
    "zone notin (a,b,c)",
    "!zone",
    "none!=x",
    "!none",
    "gpu!=true",
  ],
];

/** A node's view as the read model holds it; only what a test varies is a parameter. */
function nodeView(
  nodeId: string,
  v: {
    nodeType?: NodeView["nodeType"];
    labels?: Record<string, string>;
    membership: Membership;
    health: Health;
    revision?: number;
    deleted?: boolean;
    hostname?: string;
    lastHeartbeatAtChange?: string | null;
  },
): NodeView {
  const nodeType = v.nodeType ?? "Compute";
  const deleted = v.deleted ?? false;
  return {
    nodeId,
    nodeType,
    info: {
      NodeID: nodeId,
      NodeType: nodeType,
      Hostname: v.hostname ?? nodeId,
      Labels: v.labels ?? {},
      ...(nodeType === "Compute"
        ? {
            ComputeNodeInfo: {
              ExecutionEngines: [],
              Publishers: [],
              StorageSources: [],
              MaxCapacity: {},
              MaxJobRequirements: {},
            },
          }
        : {}),
      BacalhauVersion: { GitVersion: "test", GOOS: "linux", GOARCH: "amd64" },
    },
    membership: v.membership,
    health: v.health,
    revision: v.revision ?? 0,
    lifecycle: 1,
    registered: !deleted,
    deleted,
    credential: undefined,
    registeredAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    healthSince: "2024-01-01T00:00:00.000Z",
    lastHeartbeatAtChange: v.lastHeartbeatAtChange ?? null,
    cordon: undefined,
    labelOverrides: {},
    preauthorization: undefined,
  };
}

/** Host names JSON must escape, and ones that spell the JSON renderer's marks of the live fields. */
const HOSTNAMES = [
  'h"quoted\\',
  "ünïcødé ✓",
  "\u0000shoal-live:LastHeartbeat\u0000",
  "\u0000shoal-live:AvailableCapacity\u0000x",
  "line\nbreak",
];

/**
 * A fleet where everything is drawn from small sets, so keys tie often and filters select anything from all to none.
 */
class Fleet {
  readonly views = new Map<string, NodeView>();
  readonly resources = new Map<string, ResourceReport>();
  /** Heartbeats this process received (ms); none yet for the rest. */
  readonly beats = new Map<string, number>();
  constructor(
    private readonly random: Random,
    readonly index: NodeIndex,
  ) {}

  private randomView(nodeId: string, deleted: boolean): NodeView {
    const r = this.random;
    const labels: Record<string, string> = {};
    if (r.next() < 0.8) labels.zone = r.pick(["a", "b", "c"]);
    if (r.next() < 0.3) labels.gpu = "true";
    if (r.next() < 0.5) labels.rack = r.pick(["r1", "r2", "r3"]);
    if (r.next() < 0.02) labels.tier = "rare";
    if (r.next() < 0.95) labels.spot = "true";
    // A label named like the info key the JSON renderer splits its text at.
    if (r.next() < 0.05) labels.BacalhauVersion = "v1";
    const compute = nodeId !== "node-self" && r.next() < 0.95;
    return nodeView(nodeId, {
      nodeType: compute ? "Compute" : "Requester",
      labels,
      membership: r.pick(MEMBERSHIPS),
      health: r.pick(HEALTHS),
      revision: r.int(10),
      deleted,
      ...(r.next() < 0.1 ? { hostname: r.pick(HOSTNAMES) } : {}),
      ...(r.next() < 0.3
        ? { lastHeartbeatAtChange: new Date(Date.UTC(2023, 11, 31) + r.int(1_000_000)).toISOString() }
        : {}),
    });
  }

  private randomResources(): ResourceReport {
    const r = this.random;
    const maybe = (values: number[]) => (r.next() < 0.2 ? undefined : r.pick(values));
    const cap = {
      CPU: maybe([0, 1, 2, 4, 0.5]),
      Memory: maybe([0, 1024, 2048]),
      Disk: maybe([0, 10, 20]),
      GPU: maybe([0, 1, 2]),
    };
    return {
      AvailableCapacity: Object.fromEntries(Object.entries(cap).filter(([, v]) => v !== undefined)),
      QueueUsedCapacity: {},
      RunningExecutions: 0,
      EnqueuedExecutions: 0,
    };
  }

  /**
   * One change as the orchestrator makes them: a view change (new, changed, deleted, re-registered) or a resource
   * report.
   */
  change(idSpace: number): void {
    const r = this.random;
    const nodeId = `node-${r.int(idSpace)}`;
    const roll = r.next();
    if (roll < 0.1) {
      this.beats.set(nodeId, Date.UTC(2024, 0, 1) + r.int(1_000_000));
      return;
    }
    if (roll < 0.35) {
      const report = r.next() < 0.1 ? undefined : this.randomResources();
      if (report) this.resources.set(nodeId, report);
      else this.resources.delete(nodeId);
      this.index.setCapacity(nodeId, report?.AvailableCapacity);
      return;
    }
    const before = this.views.get(nodeId);
    let view: NodeView;
    if (before && !before.deleted && roll < 0.45) view = { ...before, deleted: true };
    else if (before && !before.deleted && roll < 0.8) {
      // Partial changes, as single events make them: membership, health or labels/info.
      const fresh = this.randomView(nodeId, false);
      const which = r.int(3);
      view =
        which === 0
          ? { ...before, membership: fresh.membership }
          : which === 1
            ? { ...before, health: fresh.health }
            : { ...before, info: fresh.info, nodeType: fresh.nodeType };
    } else view = this.randomView(nodeId, false);
    this.views.set(nodeId, view);
    this.index.update(nodeId, view);
  }

  states(): NodeState[] {
    return [...this.views.values()].filter((v) => !v.deleted).map((v) => this.state(v));
  }

  /** What NodeManager.live says: undefined for a node it does not track. */
  live(view: NodeView): LiveView | undefined {
    const resources = this.resources.get(view.nodeId);
    const beat = this.beats.get(view.nodeId);
    return resources || beat !== undefined ? { lastHeartbeat: beat ?? null, resources } : undefined;
  }

  state(view: NodeView): NodeState {
    return toNodeState(view, this.live(view));
  }
}

function randomQuery(r: Random): ListNodesQuery {
  const q: Record<string, unknown> = {};
  if (r.next() < 0.85) q.limit = r.pick([1, 2, 3, 7, 10, 25, 100]);
  const order = r.pick(ORDERS);
  if (order !== "" || r.next() < 0.5) q.order_by = order;
  if (r.next() < 0.5) q.reverse = true;
  if (r.next() < 0.4) q["filter-approval"] = r.pick([...MEMBERSHIPS, ""]);
  if (r.next() < 0.4) q["filter-status"] = r.pick([...HEALTHS, "CONNECTED", "DISCONNECTED", ""]);
  if (r.next() < 0.6) {
    const terms = Array.from({ length: 1 + r.int(3) }, () => r.pick(TERMS));
    q.labels = r.next() < 0.5 ? terms.join(",") : terms;
  }
  return q as ListNodesQuery;
}

const ids = (page: { Nodes: NodeState[] }) => page.Nodes.map((n) => n.Info.NodeID);

/**
 * Pages through a query with the index and with the naive filter+sort over the same fleet,
 * changing the fleet between pages: every page and every next_token must be the same.
 */
function comparePaging(
  fleet: Fleet,
  r: Random,
  idSpace: number,
  changesBetweenPages: number,
  json: NodeStateJson,
): number {
  const query = randomQuery(r);
  let token: string | undefined;
  let pages = 0;
  do {
    const q = token === undefined ? query : { ...query, next_token: token };
    const expected = naiveQueryNodes(fleet.states(), q);
    const actual = queryNodes(fleet.index, q, (v) => fleet.state(v));
    expect(ids(actual), JSON.stringify(q)).toEqual(ids(expected));
    expect(actual.Nodes, JSON.stringify(q)).toEqual(expected.Nodes);
    expect(actual.NextToken, JSON.stringify(q)).toBe(expected.NextToken);
    // The route's body: each node's kept JSON with its live fields spliced in. Byte for byte what
    // Fastify sent for the objects (JSON.stringify), so it parses to exactly the naive page too.
    const page = queryNodes(fleet.index, q, (v) => v);
    const sent = json.listBody(page.Nodes, (v) => fleet.live(v), page.NextToken);
    const body = typeof sent === "string" ? sent : sent.toString("utf8");
    expect(body, JSON.stringify(q)).toBe(JSON.stringify(actual));
    // Bytes only when latin1 and utf8 agree on them; a string otherwise (a host name with ü, say).
    expect(typeof sent === "string", JSON.stringify(q)).toBe(/[\u0080-\uffff]/.test(body));
    expect(JSON.parse(body), JSON.stringify(q)).toEqual(expected);
    token = actual.NextToken || undefined;
    for (let i = 0; i < changesBetweenPages; i++) fleet.change(idSpace);
    pages++;
  } while (token !== undefined && pages < 8);
  return pages;
}

describe("NodeIndex queries equal the naive filter, sort and page", () => {
  const configs = [
    { name: "default plan", fleets: [0, 5, 40, 300, 1000], options: {} },
    // Ranks candidate sets only when they fit in a page: the walk and its fallback to ranking do the rest.
    { name: "walk first", fleets: [60, 600], options: { smallCandidateSet: 0 } },
    { name: "candidates first", fleets: [60, 600], options: { smallCandidateSet: Number.POSITIVE_INFINITY } },
    // Label postings as bitmaps from their first member (bit tests, complements of every negative term), or never.
    { name: "every posting a bitmap", fleets: [60, 600], options: { bitmapMin: 1 } },
    { name: "no bitmaps", fleets: [60, 600], options: { bitmapMin: Number.POSITIVE_INFINITY } },
  ];
  for (const { name, fleets, options } of configs) {
    for (const size of fleets) {
      it(`${name}: ${size} nodes, random queries, cursors and changes between pages`, () => {
        const r = seededRandom(size * 31 + Object.keys(options).length);
        const fleet = new Fleet(r, new NodeIndex(options));
        const idSpace = Math.max(1, Math.ceil(size * 1.2));
        for (let i = 0; i < size * 3; i++) fleet.change(idSpace);
        // One for the whole run, as the route keeps one: its kept texts must follow every change.
        const json = new NodeStateJson();
        let pages = 0;
        const queries = size >= 300 ? 50 : 120;
        for (let q = 0; q < queries; q++) pages += comparePaging(fleet, r, idSpace, r.pick([0, 0, 1, 5, 20]), json);
        // Most queries page (an empty fleet has one page per query, and says so).
        if (size > 5) expect(pages).toBeGreaterThan(queries * 2);
        expect(fleet.index.size).toBe(fleet.states().length);
      });
    }
  }

  it("answers a selector that matches nothing from its empty candidate set", () => {
    const r = seededRandom(7);
    const fleet = new Fleet(r, new NodeIndex());
    for (let i = 0; i < 3000; i++) fleet.change(2000);
    for (const labels of ["none=x", "zone in (q,r)", "tier=rare,none"]) {
      const q = { limit: 100, labels } as ListNodesQuery;
      expect(queryNodes(fleet.index, q, (v) => fleet.state(v))).toEqual(naiveQueryNodes(fleet.states(), q));
    }
  });

  it("matches job constraints' gt and lt requirements (no text form) as matchesLabels does, with and without bitmaps", () => {
    for (const bitmapMin of [1, 1_000_000]) {
      const index = new NodeIndex({ bitmapMin });
      const labelsOf = (i: number): Record<string, string> =>
        i % 5 === 0 ? {} : i % 5 === 1 ? { cores: "x" } : { cores: String(i % 13), zone: i % 2 ? "a" : "b" };
      for (let i = 0; i < 600; i++)
        index.update(
          `n-${String(i).padStart(4, "0")}`,
          nodeView(`n-${String(i).padStart(4, "0")}`, {
            labels: labelsOf(i),
            membership: "APPROVED",
            health: "HEALTHY",
          }),
        );
      for (const selector of [
        { text: "cores>6", requirements: [{ key: "cores", op: "gt", value: 6n }] },
        {
          text: "cores<3,zone=a",
          requirements: [
            { key: "cores", op: "lt", value: 3n },
            { key: "zone", op: "in", values: ["a"] },
          ],
        },
        { text: "none>-1", requirements: [{ key: "none", op: "gt", value: -1n }] },
      ] as const satisfies readonly LabelSelector[]) {
        const expected = Array.from({ length: 600 }, (_, i) => i)
          .filter((i) => matchesLabels(selector, labelsOf(i)))
          .map((i) => `n-${String(i).padStart(4, "0")}`);
        const page = index.query({ order: "id", reverse: false, selector, limit: 1000 });
        expect(
          page.views.map((v) => v.nodeId),
          selector.text,
        ).toEqual(expected);
      }
    }
  });

  it("refuses a next_token from another order, or with a key of the wrong type, as the naive list does", () => {
    const fleet = new Fleet(seededRandom(3), new NodeIndex());
    for (let i = 0; i < 50; i++) fleet.change(40);
    const first = queryNodes(fleet.index, { limit: 2, order_by: "available_cpu" } as ListNodesQuery, (v) =>
      fleet.state(v),
    );
    expect(() => queryNodes(fleet.index, { next_token: first.NextToken } as ListNodesQuery, (v) => v)).toThrow(
      /different order_by/,
    );
    const forged = Buffer.from(JSON.stringify({ o: "available_cpu", r: false, k: "x", i: "node-1" })).toString(
      "base64url",
    );
    expect(() =>
      queryNodes(fleet.index, { order_by: "available_cpu", next_token: forged } as ListNodesQuery, (v) => v),
    ).toThrow(/invalid next_token/);
  });
});

describe("NodeIndex id look-ups", () => {
  it("resolves exact ids and unique prefixes as resolveNodeId over every id does, deleted nodes only in the history look-up", () => {
    const r = seededRandom(11);
    const fleet = new Fleet(r, new NodeIndex());
    for (let i = 0; i < 2000; i++) fleet.change(300);
    const current = [...fleet.views.values()].filter((v) => !v.deleted).map((v) => v.nodeId);
    const all = [...fleet.views.keys()];
    const outcome = (f: () => string) => {
      try {
        return f();
      } catch (e) {
        return `${(e as { kind: string }).kind}: ${(e as Error).message} ${JSON.stringify((e as { details?: unknown }).details)}`;
      }
    };
    for (const probe of [
      "node-1",
      "node-12",
      "node-123",
      "node-2",
      "node-29",
      "node-299",
      "node-",
      "nod",
      "x",
      "node-1000",
      "node-7",
    ]) {
      expect(
        outcome(() => resolveNodeId(probe, fleet.index.idsWithPrefix(probe))),
        probe,
      ).toBe(outcome(() => resolveNodeId(probe, current)));
      expect(
        outcome(() => resolveNodeId(probe, fleet.index.everSeenWithPrefix(probe))),
        probe,
      ).toBe(outcome(() => resolveNodeId(probe, all)));
    }
  });
});

describe("toNodeState", () => {
  it("carries every field of a decoded stored NodeInfo (it builds the info field by field)", () => {
    const info = {
      NodeID: "node-1",
      NodeType: "Compute",
      Hostname: "h",
      Labels: { zone: "a" },
      ComputeNodeInfo: {
        ExecutionEngines: ["docker"],
        Publishers: ["local"],
        StorageSources: ["s3"],
        MaxCapacity: { CPU: 2 },
        MaxJobRequirements: { CPU: 1 },
      },
      BacalhauVersion: { GitVersion: "v1", GOOS: "linux", GOARCH: "amd64" },
    };
    const views = new NodeViews();
    views.handle({
      id: "e1",
      type: "NodeRegistered",
      stream: "node-node-1",
      revision: 0,
      position: 1,
      time: "2024-01-01T00:00:00.000Z",
      data: { NodeID: "node-1", NodeType: "Compute", Info: info, Membership: "PENDING", Lifecycle: 1 },
      metadata: { schemaVersion: 1 },
    });
    const view = views.get("node-1") as NodeView;
    const state = toNodeState(view, undefined);
    const { ComputeNodeInfo: compute, ...rest } = view.info;
    expect(state.Info).toMatchObject(rest);
    expect(Object.keys(state.Info).sort()).toEqual(Object.keys(view.info).sort());
    expect(Object.keys(state.Info.ComputeNodeInfo ?? {}).sort()).toEqual(
      [
        ...Object.keys(compute ?? {}),
        "AvailableCapacity",
        "QueueCapacity",
        "RunningExecutions",
        "EnqueuedExecutions",
      ].sort(),
    );
    expect(state.Info.ComputeNodeInfo).toMatchObject(compute ?? {});
  });
});

describe("NodeStateJson", () => {
  it("writes LastHeartbeat of any instant as toISOString does, and throws where it throws", () => {
    const json = new NodeStateJson();
    const view = nodeView("node-1", { membership: "APPROVED", health: "HEALTHY" });
    const second = Date.UTC(2024, 5, 1, 12, 0, 0);
    for (const ms of [
      0,
      -1,
      -1000,
      -1001,
      999,
      1000,
      second,
      second + 7,
      second + 42,
      second + 999,
      1.5,
      -1.5,
      8.64e15,
      -8.64e15,
      253402300799999,
      253402300800000,
    ]) {
      const live = { lastHeartbeat: ms, resources: undefined };
      expect(json.render(view, live), String(ms)).toBe(JSON.stringify(toNodeState(view, live)));
    }
    for (const ms of [8.64e15 + 1, -8.64e15 - 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const live = { lastHeartbeat: ms, resources: undefined };
      expect(() => toNodeState(view, live), String(ms)).toThrow(RangeError);
      expect(() => json.render(view, live), String(ms)).toThrow(RangeError);
    }
  });
});

describe("Drain.ExecutionsLeft", () => {
  const drain = drainUnderWay();
  const approved = nodeView("node-1", { membership: "APPROVED", health: "HEALTHY" });
  const draining: NodeView = { ...approved, drain };
  const expired: NodeView = { ...approved, drain: { ...drain, status: "expired", endedAt: drain.deadline, left: 1 } };

  it("is the orchestrator's count while the drain runs, and absent without a count or once the drain ended", () => {
    expect(toNodeState(draining, undefined, 2).Drain?.ExecutionsLeft).toBe(2);
    expect(toNodeState(draining, undefined, 0).Drain?.ExecutionsLeft).toBe(0);
    expect(toNodeState(draining, undefined).Drain).not.toHaveProperty("ExecutionsLeft");
    expect(toNodeState(expired, undefined, 2).Drain).not.toHaveProperty("ExecutionsLeft");
    expect(toNodeState(approved, undefined, 2)).not.toHaveProperty("Drain");
  });

  it("is in the list's JSON as in the object, and moves between pages with no event (no stale template)", () => {
    const json = new NodeStateJson();
    const live = { lastHeartbeat: Date.UTC(2024, 0, 1), resources: undefined };
    const views = [approved, draining, expired];
    for (const count of [1, 0, 3]) {
      const body = json
        .listBody(
          views,
          () => live,
          "",
          () => count,
        )
        .toString();
      const expected = views.map((v) => toNodeState(v, live, v === draining ? count : undefined));
      expect(JSON.parse(body)).toEqual({ Nodes: expected, NextToken: "" });
      expect(body).toBe(JSON.stringify({ Nodes: expected, NextToken: "" }));
    }
  });
});

describe("NodeIndex counts", () => {
  it("counts nodes in the cluster per membership and health, deleted ones left out", () => {
    const index = new NodeIndex();
    const view = (nodeId: string, membership: Membership, health: Health, deleted = false) =>
      nodeView(nodeId, { membership, health, deleted });
    index.update("a", view("a", "APPROVED", "HEALTHY"));
    index.update("b", view("b", "APPROVED", "HEALTHY"));
    index.update("c", view("c", "PENDING", "UNHEALTHY"));
    index.update("d", view("d", "APPROVED", "HEALTHY"));
    index.update("d", view("d", "APPROVED", "HEALTHY", true));
    index.update("b", view("b", "REJECTED", "UNKNOWN"));
    expect(index.counts()).toEqual([
      { membership: "PENDING", health: "UNHEALTHY", count: 1 },
      { membership: "APPROVED", health: "HEALTHY", count: 1 },
      { membership: "REJECTED", health: "UNKNOWN", count: 1 },
    ]);
  });
});

describe("NodeIndex capacity orders", () => {
  it("list in id order until a node reports capacity, then by capacity, every node once, as the naive list does", () => {
    const index = new NodeIndex();
    const ids = ["n-c", "n-a", "n-d", "n-b"];
    for (const id of ids) index.update(id, nodeView(id, { membership: "APPROVED", health: "HEALTHY" }));
    const listed = (order: "available_cpu" | "available_gpu", reverse = false) =>
      index
        .query({ order, reverse, selector: parseLabelSelector(""), limit: Number.POSITIVE_INFINITY })
        .views.map((v) => v.nodeId);
    expect(listed("available_cpu")).toEqual(["n-a", "n-b", "n-c", "n-d"]);
    expect(listed("available_cpu", true)).toEqual(["n-d", "n-c", "n-b", "n-a"]);
    index.setCapacity("n-c", { CPU: 2 });
    index.setCapacity("n-b", { CPU: 4, GPU: 1 });
    // A node indexed after the first report, and one changed, are in the capacity orders' own sets too.
    index.update("n-e", nodeView("n-e", { membership: "APPROVED", health: "HEALTHY" }));
    index.update("n-a", nodeView("n-a", { membership: "APPROVED", health: "UNHEALTHY" }));
    expect(listed("available_cpu")).toEqual(["n-b", "n-c", "n-a", "n-d", "n-e"]);
    expect(listed("available_gpu")).toEqual(["n-b", "n-a", "n-c", "n-d", "n-e"]);
  });
});

describe("NodeIndex.updateMany", () => {
  it("leaves the index update() per node leaves: every order both ways, every selector, counts and look-ups", () => {
    const random = seededRandom(41);
    const orders = ORDERS.filter((o) => o !== "");
    const randomView = (nodeId: string) =>
      nodeView(nodeId, {
        nodeType: random.next() < 0.9 ? "Compute" : "Requester",
        labels: random.next() < 0.5 ? { zone: random.pick(["a", "b"]) } : { rack: "r1" },
        membership: random.pick(MEMBERSHIPS),
        health: random.pick(HEALTHS),
        revision: random.int(10),
        deleted: random.next() < 0.05,
      });
    const oneByOne = new NodeIndex();
    const together = new NodeIndex();
    const ids = Array.from({ length: 6_000 }, (_, i) => `node-${String(i).padStart(5, "0")}`);
    // The first batch builds both from nothing; then a few changes, then as many as a fold of thousands brings.
    for (const [batch, changes] of [4_000, 20, 900, 2_500, 6_000].entries()) {
      const changed = new Map<string, NodeView>();
      for (let i = 0; i < changes; i++) {
        const id = random.pick(ids);
        changed.set(id, randomView(id));
      }
      for (const [id, view] of changed) oneByOne.update(id, view);
      together.updateMany(changed);
      // Capacity reported between batches moves the capacity orders' keys apart.
      for (let i = 0; i < 50; i++) {
        const id = random.pick(ids);
        const available = { CPU: random.int(4), Memory: random.int(3) * 1024 };
        oneByOne.setCapacity(id, available);
        together.setCapacity(id, available);
      }
      expect(together.size, `batch ${batch}`).toBe(oneByOne.size);
      expect(together.counts()).toEqual(oneByOne.counts());
      for (const id of ids.slice(0, 300)) expect(together.get(id)).toBe(oneByOne.get(id));
      for (const order of orders)
        for (const reverse of [false, true])
          for (const labels of ["", "zone=a", "!zone"]) {
            const q = { order, reverse, selector: parseLabelSelector(labels), limit: Number.POSITIVE_INFINITY };
            expect(
              together.query(q).views.map((v) => v.nodeId),
              `batch ${batch}: ${order} ${reverse} ${labels}`,
            ).toEqual(oneByOne.query(q).views.map((v) => v.nodeId));
          }
      expect(together.idsWithPrefix("node-01")).toEqual(oneByOne.idsWithPrefix("node-01"));
    }
  });
});

/**
 * A selector that no term narrows walks the order and skips its non-matches. With bitmaps, a
 * negative term few nodes match is answered from its complement (below); an index without them
 * walks, as a selector of terms on keys too rare for bitmaps does.
 */
const NO_BITMAPS = Number.POSITIVE_INFINITY;

describe("NodeIndex scan budget", () => {
  const LIMIT = 10;
  const BUDGET = 500;
  /** Every node has `spot` but one in 500: `!spot` matches 0.2 % of the fleet. */
  function rareFleet(size: number, r: Random): Map<string, NodeView> {
    const views = new Map<string, NodeView>();
    for (let i = 0; i < size; i++) {
      const nodeId = `node-${String(i).padStart(6, "0")}`;
      const labels: Record<string, string> = { zone: r.pick(["a", "b", "c"]) };
      if (i % 500 !== 7) labels.spot = "true";
      views.set(
        nodeId,
        nodeView(nodeId, { labels, membership: r.pick(MEMBERSHIPS), health: r.pick(HEALTHS), revision: r.int(5) }),
      );
    }
    return views;
  }

  it("pages a negative-only selector that few nodes match: every match exactly once, each page within limit + 1 + budget entries", () => {
    const r = seededRandom(99);
    const views = rareFleet(20_000, r);
    const index = new NodeIndex({ scanBudget: () => BUDGET, bitmapMin: NO_BITMAPS });
    for (const [id, view] of views) index.update(id, view);
    const resources = new Map<string, ResourceReport>();
    for (const id of views.keys()) {
      const report = {
        AvailableCapacity: { CPU: r.int(8), Memory: r.int(4) * 1024 },
        QueueUsedCapacity: {},
        RunningExecutions: 0,
        EnqueuedExecutions: 0,
      };
      resources.set(id, report);
      index.setCapacity(id, report.AvailableCapacity);
    }
    const states = [...views.values()].map((v) =>
      toNodeState(v, { lastHeartbeat: null, resources: resources.get(v.nodeId) }),
    );
    const queries: ListNodesQuery[] = [
      { labels: "!spot" },
      { labels: "spot notin (true)", order_by: "available_cpu", reverse: true },
      { labels: "!spot,zone!=b", "filter-status": "DISCONNECTED", order_by: "status" },
      // A positive term whose candidate set is the whole fleet, and a negative one that rules almost all of it out.
      { labels: "zone,!spot", order_by: "available_memory" },
    ] as ListNodesQuery[];
    for (const query of queries) {
      const all = naiveQueryNodes(states, query).Nodes.map((n) => n.Info.NodeID);
      expect(all.length, JSON.stringify(query)).toBeGreaterThan(0);
      const seen: string[] = [];
      let token = "";
      let shortPages = 0;
      let pages = 0;
      do {
        const page = queryNodes(
          index,
          { ...query, limit: LIMIT, ...(token ? { next_token: token } : {}) },
          (v) => v.nodeId,
        );
        seen.push(...page.Nodes);
        if (page.NextToken && page.Nodes.length < LIMIT) shortPages++;
        token = page.NextToken;
        pages++;
      } while (token && pages < 1000);
      expect(seen, JSON.stringify(query)).toEqual(all);
      // The budget, not the limit, ended most pages: 20,000 entries at 500 a page.
      expect(shortPages, JSON.stringify(query)).toBeGreaterThan(20);
    }

    // The same walk at the index, counting what each page looked at.
    const selector = parseLabelSelector("!spot");
    let after: { key: SortKey; id: string } | undefined;
    const found: string[] = [];
    for (;;) {
      const page = index.query({ order: "id", reverse: false, selector, limit: LIMIT, ...(after ? { after } : {}) });
      expect(page.visited).toBeLessThanOrEqual(LIMIT + 1 + BUDGET);
      found.push(...page.views.map((v) => v.nodeId));
      if (!page.more) break;
      after = { key: page.lastKey as SortKey, id: page.lastId as string };
    }
    expect(found).toEqual([...views.values()].filter((v) => !("spot" in v.info.Labels)).map((v) => v.nodeId));
  });

  it("keeps every unchanged match exactly once while nodes change between budget-cut pages", () => {
    const r = seededRandom(5);
    const views = rareFleet(10_000, r);
    const index = new NodeIndex({ scanBudget: () => BUDGET, bitmapMin: NO_BITMAPS });
    for (const [id, view] of views) index.update(id, view);
    const ids = [...views.keys()];
    const touched = new Set<string>();
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = queryNodes(
        index,
        { labels: "!spot", limit: LIMIT, ...(token ? { next_token: token } : {}) } as ListNodesQuery,
        (v) => v.nodeId,
      );
      seen.push(...page.Nodes);
      token = page.NextToken;
      // Labels, membership and health change anywhere in the fleet, ahead of the cursor and behind it.
      for (let i = 0; i < 20; i++) {
        const id = r.pick(ids);
        const before = views.get(id) as NodeView;
        const labels = { ...before.info.Labels };
        if (r.next() < 0.5) delete labels.spot;
        else labels.spot = "true";
        const view = {
          ...before,
          membership: r.pick(MEMBERSHIPS),
          health: r.pick(HEALTHS),
          info: { ...before.info, Labels: labels },
        };
        views.set(id, view);
        index.update(id, view);
        touched.add(id);
      }
      pages++;
    } while (token && pages < 1000);
    expect(new Set(seen).size).toBe(seen.length);
    const stillMatching = ids.filter((id) => !touched.has(id) && !("spot" in (views.get(id) as NodeView).info.Labels));
    expect(stillMatching.length).toBeGreaterThan(0);
    for (const id of stillMatching) expect(seen).toContain(id);
  });

  it("does not cut pages without a limit: the whole list was asked for", () => {
    const r = seededRandom(8);
    const views = rareFleet(5_000, r);
    const index = new NodeIndex({ scanBudget: () => BUDGET, bitmapMin: NO_BITMAPS });
    for (const [id, view] of views) index.update(id, view);
    const page = queryNodes(index, { labels: "!spot" } as ListNodesQuery, (v) => v.nodeId);
    expect(page.NextToken).toBe("");
    expect(page.Nodes).toEqual([...views.values()].filter((v) => !("spot" in v.info.Labels)).map((v) => v.nodeId));
  });

  it("bounds a page by its limit by default: SCAN_PER_NODE non-matching entries per node asked for, at least MIN_SCAN", () => {
    const r = seededRandom(12);
    const views = rareFleet(40_000, r);
    const index = new NodeIndex({ bitmapMin: NO_BITMAPS });
    for (const [id, view] of views) index.update(id, view);
    const selector = parseLabelSelector("!spot");
    for (const limit of [1, 100, 1000]) {
      const page = index.query({ order: "id", reverse: false, selector, limit });
      expect(page.visited).toBeLessThanOrEqual(limit + 1 + Math.max(MIN_SCAN, SCAN_PER_NODE * limit));
      expect(page.more).toBe(true);
    }
  });
});

describe("NodeIndex label postings: negative terms few nodes match", () => {
  /** `spot` on all but one node in 400; `zone` on all but one in 7; `rack` on half. */
  function fleetOf(size: number, r: Random): Map<string, NodeView> {
    const views = new Map<string, NodeView>();
    for (let i = 0; i < size; i++) {
      const nodeId = `node-${String(i).padStart(6, "0")}`;
      const labels: Record<string, string> = {};
      if (i % 400 !== 11) labels.spot = "true";
      if (i % 7 !== 0) labels.zone = r.pick(["a", "b", "c"]);
      if (r.next() < 0.5) labels.rack = r.pick(["r1", "r2"]);
      views.set(
        nodeId,
        nodeView(nodeId, { labels, membership: r.pick(MEMBERSHIPS), health: r.pick(HEALTHS), revision: r.int(5) }),
      );
    }
    return views;
  }

  const SELECTORS = [
    "!spot",
    "spot!=true",
    "spot notin (true)",
    "!spot,zone=a",
    "!spot,!rack",
    "zone notin (a,b,c)",
    "!zone,rack=r1",
    "!zone,spot",
  ];

  it("fills every page from the complement of the ruled-out postings, looking at no more nodes than the complement holds", () => {
    const r = seededRandom(21);
    const views = fleetOf(20_000, r);
    const index = new NodeIndex();
    for (const [id, view] of views) index.update(id, view);
    const states = [...views.values()].map((v) => toNodeState(v, undefined));
    for (const labels of SELECTORS) {
      for (const order of ["id", "status", "available_cpu"] as const) {
        const query = { labels, order_by: order, limit: 7 } as ListNodesQuery;
        const all = naiveQueryNodes(states, { ...query, limit: undefined } as ListNodesQuery).Nodes.map(
          (n) => n.Info.NodeID,
        );
        expect(all.length, labels).toBeGreaterThan(7);
        const seen: string[] = [];
        let token = "";
        do {
          const page = queryNodes(index, { ...query, ...(token ? { next_token: token } : {}) }, (v) => v.nodeId);
          // Every page full but the last: no page is cut short by a scan budget.
          if (page.NextToken) expect(page.Nodes.length, labels).toBe(7);
          seen.push(...page.Nodes);
          token = page.NextToken;
        } while (token);
        expect(seen, `${labels} ${order}`).toEqual(all);
      }
      // At the index: the page ranked the complement (≈ 1 node in 400, or 1 in 7), not the fleet.
      const page = index.query({ order: "id", reverse: false, selector: parseLabelSelector(labels), limit: 7 });
      expect(page.visited, labels).toBeLessThanOrEqual(labels.includes("zone") ? 20_000 / 7 + 1 : 20_000 / 400 + 1);
    }
  });

  it("equals the naive list page by page while labels change, nodes come and go between pages", () => {
    const r = seededRandom(22);
    const views = fleetOf(4_000, r);
    // Bitmaps from 64 members: postings cross that line both ways while the fleet changes.
    const index = new NodeIndex({ bitmapMin: 64 });
    for (const [id, view] of views) index.update(id, view);
    let next = views.size;
    const change = () => {
      const roll = r.next();
      const ids = [...views.keys()];
      if (roll < 0.3) {
        const nodeId = `node-${String(next++).padStart(6, "0")}`;
        const labels: Record<string, string> = r.next() < 0.5 ? {} : { spot: "true" };
        views.set(nodeId, nodeView(nodeId, { labels, membership: r.pick(MEMBERSHIPS), health: r.pick(HEALTHS) }));
        index.update(nodeId, views.get(nodeId));
      } else if (roll < 0.5) {
        const id = r.pick(ids);
        views.delete(id);
        index.update(id, undefined);
      } else {
        const id = r.pick(ids);
        const before = views.get(id) as NodeView;
        const labels = { ...before.info.Labels };
        for (const key of ["spot", "zone", "rack"]) {
          const roll = r.next();
          if (roll < 0.3) delete labels[key];
          else if (roll < 0.6) labels[key] = r.pick(["true", "a", "r1"]);
        }
        const view = { ...before, membership: r.pick(MEMBERSHIPS), info: { ...before.info, Labels: labels } };
        views.set(id, view);
        index.update(id, view);
      }
    };
    for (const labels of SELECTORS) {
      for (const reverse of [false, true]) {
        const query = {
          labels,
          order_by: r.pick(["id", "approval", "available_memory"]),
          reverse,
          limit: 5,
        } as ListNodesQuery;
        let token = "";
        let pages = 0;
        do {
          const q = { ...query, ...(token ? { next_token: token } : {}) } as ListNodesQuery;
          const expected = naiveQueryNodes(
            [...views.values()].map((v) => toNodeState(v, undefined)),
            q,
          );
          const actual = queryNodes(index, q, (v) => toNodeState(v, undefined));
          expect(actual, JSON.stringify(q)).toEqual(expected);
          token = actual.NextToken;
          for (let i = 0; i < 25; i++) change();
          pages++;
        } while (token && pages < 30);
      }
    }
  });
});
