import { describe, expect, it } from "vitest";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import {
  MembershipLedger,
  type EventCause,
  type NodeMembershipAudit,
} from "../../../src/projections/audit-membership/membership-ledger.ts";
import { exampleEvent } from "../../support/example-events.ts";

/** Minutes after 10:00 on the test's day, as stored event times are written. */
const at = (minutes: number) => new Date(Date.parse("2026-11-29T10:00:00Z") + minutes * 60_000).toISOString();
const MIN = 60_000;
const SYSTEM: EventCause = { actor: { type: "system", id: "orchestrator" }, reason: undefined };
const by = (id: string, reason: string): EventCause => ({ actor: { type: "operator", id }, reason });

type Given = readonly [node: string, type: NodeEvent["type"], minute: number, data?: object, cause?: EventCause];

/** Given these node events in store order, when the window [since, until] (minutes) is audited: every node's row. */
function audit(given: readonly Given[], since: number, until: number): Map<string, NodeMembershipAudit> {
  const ledger = new MembershipLedger({ since: Date.parse(at(since)), until: Date.parse(at(until)) });
  for (const [node, type, minute, data, cause] of given)
    ledger.add(node, exampleEvent(type, node, data) as NodeEvent, at(minute), cause ?? SYSTEM);
  return new Map(ledger.audits().map((row) => [row.NodeID, row]));
}

const times = (row: NodeMembershipAudit | undefined) =>
  row && { healthy: row.HealthyMs / MIN, unhealthy: row.UnhealthyMs / MIN, unknown: row.UnknownMs / MIN };

describe("a node's health time is clipped to the window", () => {
  it("counts the state at since from the events before it, each change inside, and the last state up to until", () => {
    const rows = audit(
      [
        ["n-1", "NodeRegistered", 0, { Membership: "PENDING" }],
        ["n-1", "NodeApproved", 5, { Previous: "PENDING" }, by("bob", "racked and checked")],
        ["n-1", "NodeBecameUnhealthy", 20],
        // Inside the window from here on: unhealthy since 20 at since = 30.
        ["n-1", "NodeBecameUnknown", 40],
        ["n-1", "NodeBecameHealthy", 70, { Previous: "UNKNOWN" }],
        ["n-1", "NodeBecameUnhealthy", 95],
        // After until: changes nothing inside the window.
        ["n-1", "NodeBecameHealthy", 130, { Previous: "UNHEALTHY" }],
      ],
      30,
      100,
    );
    const row = rows.get("n-1");
    expect(times(row)).toEqual({ healthy: 25, unhealthy: 10 + 5, unknown: 30 });
    expect(row).toMatchObject({
      Joined: at(0),
      Membership: "APPROVED",
      By: "operator:bob",
      Reason: "racked and checked",
    });
    // Its membership changed before the window only: none is listed as inside it.
    expect(row?.Changes).toEqual([]);
  });
});

describe("a node that joined inside the window", () => {
  it("counts from its join, and lists the join and the operator's verdict with who and why", () => {
    const rows = audit(
      [
        [
          "n-2",
          "NodeRegistered",
          40,
          { Membership: "PENDING" },
          { actor: { type: "node", id: "n-2" }, reason: undefined },
        ],
        ["n-2", "NodeRejected", 50, { Previous: "PENDING" }, by("bob", "unknown hardware")],
      ],
      30,
      100,
    );
    const row = rows.get("n-2");
    // A rejected node is still in the cluster (until deleted), and nothing made it unhealthy.
    expect(times(row)).toEqual({ healthy: 60, unhealthy: 0, unknown: 0 });
    expect(row).toMatchObject({
      Joined: at(40),
      Membership: "REJECTED",
      By: "operator:bob",
      Reason: "unknown hardware",
    });
    expect(row?.Changes).toEqual([
      { Time: at(40), Event: "NodeRegistered", Membership: "PENDING", By: "node:n-2", Reason: "" },
      { Time: at(50), Event: "NodeRejected", Membership: "REJECTED", By: "operator:bob", Reason: "unknown hardware" },
    ]);
  });
});

describe("a node deleted inside the window", () => {
  it("stops counting at its delete, and counts again from a new registration", () => {
    const given: Given[] = [
      ["n-3", "NodeRegistered", 10],
      ["n-3", "NodeBecameUnhealthy", 35],
      ["n-3", "NodeDeleted", 45, { Membership: "APPROVED" }, by("alice", "decommissioned")],
    ];
    const deleted = audit(given, 30, 100).get("n-3");
    expect(times(deleted)).toEqual({ healthy: 5, unhealthy: 10, unknown: 0 });
    expect(deleted).toMatchObject({ Joined: at(10), Membership: "DELETED", By: "operator:alice" });
    expect(deleted?.Changes.map((c) => c.Event)).toEqual(["NodeDeleted"]);

    // Back at 80 (a new lifecycle starts HEALTHY); its first join stays the first.
    const back = audit([...given, ["n-3", "NodeRegistered", 80, { Lifecycle: 2 }]], 30, 100).get("n-3");
    expect(times(back)).toEqual({ healthy: 5 + 20, unhealthy: 10, unknown: 0 });
    expect(back).toMatchObject({ Joined: at(10), Membership: "APPROVED", By: "system:orchestrator" });
  });
});

describe("nodes with no events in the window", () => {
  it("lists one registered throughout at its state from before, for the whole window; leaves out one gone before it", () => {
    const rows = audit(
      [
        ["n-4", "NodeRegistered", 0],
        ["n-4", "NodeBecameUnhealthy", 10],
        ["n-5", "NodeRegistered", 0],
        ["n-5", "NodeDeleted", 20, { Membership: "APPROVED" }],
        // Joins after the window: not in it.
        ["n-6", "NodeRegistered", 120],
      ],
      30,
      100,
    );
    expect([...rows.keys()]).toEqual(["n-4"]);
    expect(times(rows.get("n-4"))).toEqual({ healthy: 0, unhealthy: 70, unknown: 0 });
    expect(rows.get("n-4")?.Changes).toEqual([]);
  });

  it("lists a node asked for by name even when it was never in the window, with nothing counted", () => {
    const ledger = new MembershipLedger({ since: Date.parse(at(30)), until: Date.parse(at(100)) });
    ledger.include("n-7");
    ledger.add("n-7", exampleEvent("NodeRegistered", "n-7") as NodeEvent, at(120), SYSTEM);
    expect(ledger.audits()).toEqual([
      {
        NodeID: "n-7",
        Joined: null,
        Membership: null,
        By: "",
        Reason: "",
        Changes: [],
        HealthyMs: 0,
        UnhealthyMs: 0,
        UnknownMs: 0,
      },
    ]);
  });
});
