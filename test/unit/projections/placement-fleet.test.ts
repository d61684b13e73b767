import { describe, expect, it } from "vitest";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import { NodeViews } from "../../../src/projections/node-views.ts";
import { PlacementFleet } from "../../../src/projections/placement-fleet.ts";
import { ledgerOf } from "../../../src/scheduler/capacity-ledger.ts";
import { candidateNodeOf } from "../../../src/scheduler/candidate-node.ts";
import { placeJob, type PlacementResult } from "../../../src/scheduler/place-job.ts";
import type { ConstraintRequirement } from "../../../src/scheduler/placement-request.ts";
import { computeInfo } from "../../support/fixtures.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { GB, job, res } from "../scheduler/scheduler-fixtures.ts";

type Random = ReturnType<typeof seededRandom>;

const ZONES = ["a", "b", "c"];
const By = { type: "operator" as const, id: "admin" };

/** Any node event a store may hold, legal for the decider or not, the ones that move placement's inputs most often. */
function randomEvent(r: Random, NodeID: string): NodeEvent {
  switch (r.int(11)) {
    case 0:
    case 1:
      return {
        type: "NodeRegistered",
        data: {
          NodeID,
          NodeType: r.int(10) === 0 ? "Requester" : "Compute",
          Info: computeInfo(NodeID, { zone: r.pick(ZONES) }),
          Membership: r.pick(["PENDING", "APPROVED", "APPROVED"]),
          Lifecycle: 1,
        },
      };
    case 2:
      return { type: "NodeApproved", data: { NodeID, Previous: "PENDING" } };
    case 3:
      return { type: "NodeRejected", data: { NodeID, Previous: "APPROVED" } };
    case 4:
      return { type: "NodeDeleted", data: { NodeID, Membership: "APPROVED" } };
    case 5:
      return {
        type: "NodeInfoUpdated",
        data: { NodeID, Info: computeInfo(NodeID, { zone: r.pick(ZONES) }), Changed: ["Labels"] },
      };
    case 6:
      return { type: "NodeBecameUnhealthy", data: { NodeID, LastHeartbeat: null, DisconnectTimeoutMs: 1000 } };
    case 7:
      return { type: "NodeBecameHealthy", data: { NodeID, Previous: "UNHEALTHY" } };
    case 8:
      return { type: "NodeCordoned", data: { NodeID, Reason: r.pick(["", "maintenance"]), By } };
    case 9:
      return { type: "NodeUncordoned", data: { NodeID, Reason: "done" } };
    default:
      return {
        type: "NodeLabelsSet",
        data: { NodeID, Set: r.int(2) === 0 ? { zone: r.pick(ZONES) } : { tier: "gold" }, Removed: [], Reset: [] },
      };
  }
}

function randomConstraints(r: Random): ConstraintRequirement[] {
  return r.pick<ConstraintRequirement[]>([
    [],
    [{ key: "zone", operator: "=", values: [r.pick(ZONES)] }],
    [{ key: "zone", operator: "in", values: [r.pick(ZONES), r.pick(ZONES)] }],
    [{ key: "tier", operator: "exists", values: [] }],
    [{ key: "zone", operator: "!=", values: [r.pick(ZONES)] }],
  ]);
}

function outcome(result: PlacementResult) {
  const { decision, placements, message, shortfall, jobQueued, deferred } = result;
  return { decision, placements, message, shortfall, jobQueued, deferred, nodes: result.nodes };
}

describe("the placement fleet, following node views", () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`places as the node list of the views does, event after event, held or not (random histories, seed ${seed})`, async () => {
      const r = seededRandom(seed);
      // Half the histories place nothing before many changes: the fleet is first asked for (and built) late.
      const firstPlacement = seed % 2 === 0 ? 0 : 120;
      const fleet = new PlacementFleet();
      const views = new NodeViews((_id, _before, after) => fleet.changed(after));
      const revisions = new Map<string, number>();
      let position = 0;
      let compared = 0;
      let placed = 0;
      for (let step = 0; step < 600; step++) {
        // A catch-up now and then: the listener hears nothing until release.
        if (step % 150 === 40) views.hold();
        if (step % 150 === 110) await views.release();
        const nodeId = `n-${r.int(25)}`;
        const revision = (revisions.get(nodeId) ?? -1) + 1;
        revisions.set(nodeId, revision);
        const event = randomEvent(r, nodeId);
        views.handle({
          id: `e${step}`,
          type: event.type,
          stream: `node-${nodeId}`,
          revision,
          position: ++position,
          time: new Date(Date.UTC(2026, 0, 1) + step * 1000).toISOString(),
          data: event.data,
          metadata: { schemaVersion: 1 },
        });
        if (step < firstPlacement || r.int(3) !== 0) continue;
        const request = job({
          jobId: `j-${step}`,
          type: r.pick(["batch", "ops"] as const),
          count: 1 + r.int(3),
          constraints: randomConstraints(r),
          resources: res(r.pick([500, 1000]), GB),
        });
        // What JobRunner gave placement before the fleet: the views' nodes, the deleted ones left out.
        const list = views
          .all()
          .filter((v) => !v.deleted)
          .map(candidateNodeOf);
        const ledger = ledgerOf([]);
        const fromFleet = placeJob({ ...request, nodes: fleet.view(views) }, ledger);
        expect(outcome(fromFleet)).toEqual(outcome(placeJob({ ...request, nodes: list }, ledger)));
        compared++;
        if (fromFleet.placements.length > 0) placed++;
      }
      expect(compared).toBeGreaterThan(firstPlacement === 0 ? 150 : 120);
      expect(placed).toBeGreaterThan(30);
    });
  }

  it("is built once from the views when placement first asks, not changed at every view change before", () => {
    const fleet = new PlacementFleet();
    const views = new NodeViews((_id, _before, after) => fleet.changed(after));
    let position = 0;
    const handle = (event: NodeEvent, revision: number) =>
      views.handle({
        id: `e${position}`,
        type: event.type,
        stream: `node-${event.data.NodeID}`,
        revision,
        position: ++position,
        time: new Date(Date.UTC(2026, 0, 1) + position * 1000).toISOString(),
        data: event.data,
        metadata: { schemaVersion: 1 },
      });
    for (let i = 0; i < 20; i++) {
      const NodeID = `n-${i}`;
      handle(
        {
          type: "NodeRegistered",
          data: {
            NodeID,
            NodeType: "Compute",
            Info: computeInfo(NodeID, { zone: "a" }),
            Membership: "APPROVED",
            Lifecycle: 1,
          },
        },
        0,
      );
      handle({ type: "NodeCordoned", data: { NodeID, Reason: "maintenance", By } }, 1);
      handle({ type: "NodeUncordoned", data: { NodeID, Reason: "done" } }, 2);
    }
    // One index change per node: each made a candidate once, from the view it has when placement asks.
    const first = fleet.view(views);
    expect([first.version, first.size]).toEqual([20, 20]);
    // From then on it follows each change.
    handle({ type: "NodeCordoned", data: { NodeID: "n-3", Reason: "maintenance", By } }, 3);
    const next = fleet.view(views);
    expect(next.version).toBe(21);
    expect(next.indexed()?.candidateCount("docker", [])).toBe(19);
  });
});
