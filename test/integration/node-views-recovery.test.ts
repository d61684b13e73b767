import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { parseLabelSelector } from "../../src/labels/label-selector.ts";
import { NodeIndex } from "../../src/projections/node-index/node-index.ts";
import type { NodeView } from "../../src/projections/node-view.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { recoverNodes } from "../support/recover-nodes.ts";
import { seededRandom } from "../support/seeded-random.ts";

const KEYS = [
  "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "UBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
];

/** Any node event, legal for the decider or not: the fold must take what a store holds. */
function randomEvent(random: ReturnType<typeof seededRandom>, id: string, lifecycle: number): NodeEvent {
  const NodeID = id;
  switch (random.int(10)) {
    case 0:
      return {
        type: "NodeRegistered",
        data: {
          NodeID,
          NodeType: random.pick(["Compute", "Requester"]),
          Info: computeInfo(id, { zone: random.pick(["a", "b"]) }),
          Membership: random.pick(["PENDING", "APPROVED"]),
          Lifecycle: lifecycle,
        },
      };
    case 1:
      return { type: "NodeApproved", data: { NodeID, Previous: "PENDING" } };
    case 2:
      return { type: "NodeRejected", data: { NodeID, Previous: "APPROVED" } };
    case 3:
      return { type: "NodeDeleted", data: { NodeID, Membership: "APPROVED" } };
    case 4:
      return {
        type: "NodeInfoUpdated",
        data: { NodeID, Info: computeInfo(id, { zone: random.pick(["a", "b", "c"]) }), Changed: ["Labels"] },
      };
    case 5:
      return {
        type: "NodeBecameUnhealthy",
        data: { NodeID, LastHeartbeat: random.pick([null, "2026-01-01T00:00:00.000Z"]), DisconnectTimeoutMs: 1000 },
      };
    case 6:
      return { type: "NodeBecameUnknown", data: { NodeID, LastHeartbeat: null, UnknownTimeoutMs: 5000 } };
    case 7:
      return { type: "NodeBecameHealthy", data: { NodeID, Previous: "UNHEALTHY" } };
    case 8:
      return { type: "NodeCredentialBound", data: { NodeID, PublicKey: random.pick(KEYS), Reinstated: false } };
    default:
      return { type: "NodeCredentialRevoked", data: { NodeID, PublicKey: random.pick(KEYS), Reason: "rejected" } };
  }
}

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

/** A store of random node histories (some streams never register), and its positions. */
async function randomStore(seed: number, nodes: number, events: number): Promise<SqliteEventStore> {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  opened.push(store);
  const random = seededRandom(seed);
  const revisions = new Map<string, number>();
  for (let i = 0; i < events; i++) {
    const id = `node-${random.int(nodes)}`;
    const revision = revisions.get(id) ?? -1;
    const metadata = {
      time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      actor: { type: "system" as const, id: "t" },
      correlationId: `c${i}`,
      causationId: `c${i}`,
    };
    await store.append(
      `node-${id}`,
      [encodeNodeEvent(randomEvent(random, id, 1 + random.int(3)), metadata, `e${i}`)],
      revision === -1 ? "no_stream" : revision,
    );
    revisions.set(id, revision + 1);
    // Other categories between node events: neither fold may trip over them.
    if (random.int(20) === 0)
      await store.append(
        `workflow-x`,
        [{ id: `w${i}`, type: "WorkflowStepRecorded", data: {}, metadata: { time: metadata.time } }],
        "any",
      );
  }
  return store;
}

function newManager(store: SqliteEventStore): NodeManager {
  const manager = new NodeManager({
    store,
    clock: new ManualClock(),
    logger: silentLogger,
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 60_000, unknownMs: 300_000 }, []),
  });
  opened.push({ close: () => manager.stop() });
  return manager;
}

const byId = (views: readonly NodeView[]) => [...views].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));

describe("the node read model as start-up recovery folds it", () => {
  for (const seed of [1, 2, 3]) {
    it(`equals the views folded event by event, from the start and from a snapshot; the manager adopts its states, which are the actors' own (random histories, seed ${seed})`, async () => {
      const store = await randomStore(seed, 40, 600);
      const folded = new NodeViews();
      const all = await store.readAll();
      for (const e of all) folded.handle(e);
      const nodeEvents = all.filter((e) => e.stream.startsWith("node-"));

      const manager = newManager(store);
      const recovery = await recoverNodes(manager, store);
      expect(recovery.position).toBe(all.at(-1)?.position);
      expect(recovery.events).toBe(nodeEvents.length);
      expect(byId(recovery.views.all())).toEqual(byId(folded.all()));
      expect(folded.all().length).toBeGreaterThan(20);
      // One fold: what each node's actor folds from its own stream is what the read model holds (less the ETag).
      for (const view of recovery.views.all()) {
        const { revision: _revision, ...state } = view;
        expect(await manager.nodeState(view.nodeId)).toEqual(state);
      }
      // Never-registered streams too: the manager knows every id with stored history.
      expect(manager.nodeCount).toBe(new Set(nodeEvents.map((e) => e.stream)).size);

      // From a snapshot halfway: the snapshot's views, then what the read model folded after it.
      const half = all[Math.floor(all.length / 2)]?.position ?? 0;
      const early = new NodeViews();
      for (const e of all) if (e.position <= half) early.handle(e);
      const fromSnapshot = await recoverNodes(newManager(store), store, { position: half, views: early.all() });
      expect(fromSnapshot.events).toBe(nodeEvents.filter((e) => e.position > half).length);
      expect(byId(fromSnapshot.views.all())).toEqual(byId(folded.all()));
    });
  }

  for (const seed of [4, 5, 6]) {
    it(`while held, fold states only and make views when asked, equal to views made per event (random histories, seed ${seed})`, async () => {
      const store = await randomStore(seed, 25, 700);
      const all = await store.readAll();
      const random = seededRandom(seed * 31);
      const live = new NodeViews();
      const held = new NodeViews();
      const start = random.int(all.length / 3);
      all.slice(0, start).forEach((e) => (live.handle(e), held.handle(e)));
      held.hold();
      for (const e of all.slice(start)) {
        live.handle(e);
        held.handle(e);
        // Read while held, as a snapshot or a request would: the view is made then, and the fold goes on from it.
        const nodeId = e.stream.slice("node-".length);
        if (random.int(15) === 0) expect(held.get(nodeId)).toEqual(live.get(nodeId));
        if (random.int(200) === 0) expect(byId(held.all())).toEqual(byId(live.all()));
      }
      await held.release();
      expect(byId(held.all())).toEqual(byId(live.all()));
      for (const v of live.all()) expect(held.get(v.nodeId)).toEqual(v);
      // Never-registered streams have no view either way; events evolve ignores still move the revision.
      expect(held.get("node-never")).toBeUndefined();
      expect(live.all().some((v) => !v.registered)).toBe(true);
    });
  }

  it("while held, tell the index nothing; on release, once per changed node, and the index equals one fed event by event", async () => {
    const store = await randomStore(7, 30, 400);
    const all = await store.readAll();
    const live = new NodeIndex();
    const liveViews = new NodeViews((id, _before, after) => live.update(id, after));
    const bulk = new NodeIndex();
    const told: { id: string; before: NodeView | undefined; after: NodeView }[] = [];
    const heldViews = new NodeViews((id, before, after) => {
      told.push({ id, before, after });
      bulk.update(id, after);
    });
    const half = Math.floor(all.length / 2);
    all.slice(0, half).forEach((e) => (liveViews.handle(e), heldViews.handle(e)));
    const beforeHold = new Map(heldViews.all().map((v) => [v.nodeId, v]));
    told.length = 0;
    heldViews.hold();
    all.slice(half).forEach((e) => (liveViews.handle(e), heldViews.handle(e)));
    expect(told).toEqual([]);
    await heldViews.release();
    const changed = heldViews.all().filter((v) => beforeHold.get(v.nodeId) !== v);
    expect(told.map((t) => t.id).sort()).toEqual(changed.map((v) => v.nodeId).sort());
    for (const t of told) {
      expect(t.before).toBe(beforeHold.get(t.id));
      expect(t.after).toBe(heldViews.get(t.id));
    }
    expect(told.length).toBeGreaterThan(5);
    // The same index either way: every node, every partition count, every order's first page.
    expect(bulk.size).toBe(live.size);
    expect(bulk.counts()).toEqual(live.counts());
    for (const v of liveViews.all()) expect(bulk.get(v.nodeId)).toEqual(live.get(v.nodeId));
    for (const order of ["id", "status", "approval", "type"] as const) {
      const q = { order, reverse: false, selector: parseLabelSelector(""), limit: 1000 };
      expect(bulk.query(q).views.map((v) => v.nodeId)).toEqual(live.query(q).views.map((v) => v.nodeId));
    }
    // After release, changes reach the listener at once again.
    told.length = 0;
    const registered = all.find((e) => e.type === "NodeRegistered") as (typeof all)[number];
    heldViews.handle({
      ...registered,
      type: "NodeBecameUnknown",
      data: { NodeID: "x", LastHeartbeat: null, UnknownTimeoutMs: 1 },
      position: 1e9,
      revision: 1e6,
    });
    expect(told.map((t) => [t.id, t.after.revision])).toEqual([[registered.stream.slice("node-".length), 1e6]]);
  });
});
