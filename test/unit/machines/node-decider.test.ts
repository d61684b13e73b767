import { describe, expect, it } from "vitest";
import type { NodeCommand } from "../../../machines/node/node-commands.ts";
import { nodeDecider } from "../../../machines/node/node-decider.ts";
import { nodeChart, nodeChartIndex, nodeTransitions } from "../../../machines/node/node-chart.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import { chartStep } from "../../support/chart-agreement.ts";
import { SPEC_TIME, deciderSpec } from "../../support/decider-spec.ts";
import { computeInfo } from "../../support/fixtures.ts";

const ID = "node-1";
const info = computeInfo(ID);
const given = deciderSpec(nodeDecider, ID);
const registered = (membership: "PENDING" | "APPROVED" = "PENDING", lifecycle = 1): NodeEvent => ({
  type: "NodeRegistered",
  data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: membership, Lifecycle: lifecycle },
});
const approved: NodeEvent = { type: "NodeApproved", data: { NodeID: ID, Previous: "PENDING" } };
const rejected: NodeEvent = { type: "NodeRejected", data: { NodeID: ID, Previous: "PENDING" } };
const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
const unhealthy: NodeEvent = {
  type: "NodeBecameUnhealthy",
  data: { NodeID: ID, LastHeartbeat: null, DisconnectTimeoutMs: 60000 },
};
const unknown: NodeEvent = {
  type: "NodeBecameUnknown",
  data: { NodeID: ID, LastHeartbeat: null, UnknownTimeoutMs: 300000 },
};
const self: NodeEvent = {
  type: "NodeRegistered",
  data: {
    NodeID: ID,
    NodeType: "Requester",
    Info: { ...info, NodeType: "Requester" },
    Membership: "APPROVED",
    Lifecycle: 1,
  },
};

describe("node membership", () => {
  it("registers a new node as APPROVED by default", () => {
    given()
      .when({ type: "Register", info, manualApproval: false })
      .then([registered("APPROVED")], "node registered");
  });

  it("registers a new node as PENDING under manual approval", () => {
    given()
      .when({ type: "Register", info, manualApproval: true })
      .then([registered("PENDING")]);
  });

  it("registers the orchestrator's own node APPROVED even under manual approval", () => {
    given()
      .when({ type: "Register", info: { ...info, NodeType: "Requester" }, manualApproval: true })
      .then([self]);
  });

  it("refuses a registration whose info names another node", () => {
    given()
      .when({ type: "Register", info: computeInfo("node-2"), manualApproval: false })
      .thenThrows({ code: "Conflict", message: "node info is for node-2, not node-1" });
  });

  it("approves a PENDING node", () => {
    given([registered()]).when({ type: "Approve" }).then([approved]);
  });

  it("approves a REJECTED node", () => {
    given([registered(), rejected])
      .when({ type: "Approve" })
      .then([{ type: "NodeApproved", data: { NodeID: ID, Previous: "REJECTED" } }]);
  });

  it("refuses to approve an APPROVED node with a conflict", () => {
    given([registered(), approved])
      .when({ type: "Approve" })
      .thenThrows({ code: "Conflict", message: "node node-1 already approved" });
  });

  it("rejects PENDING and APPROVED nodes", () => {
    given([registered()]).when({ type: "Reject" }).then([rejected]);
    given([registered(), approved])
      .when({ type: "Reject" })
      .then([{ type: "NodeRejected", data: { NodeID: ID, Previous: "APPROVED" } }]);
  });

  it("refuses to reject a REJECTED node", () => {
    given([registered(), rejected])
      .when({ type: "Reject" })
      .thenThrows({ code: "Conflict", message: "node node-1 already rejected" });
  });

  it("refuses a rejected node's registration with a reason", () => {
    given([registered(), rejected])
      .when({ type: "Register", info, manualApproval: false })
      .thenThrows({ code: "Rejected", message: "node has been rejected" });
  });

  it("writes nothing when a registered node registers again with the same info", () => {
    const spec = given([registered(), approved]).when({ type: "Register", info, manualApproval: false });
    spec.thenNothingHappened();
    expect(spec.decision).toMatchObject({ note: "node already registered" });
  });

  it("refuses a registration as another node type", () => {
    given([registered()])
      .when({ type: "Register", info: { ...info, NodeType: "Requester" }, manualApproval: false })
      .thenThrows({ code: "Conflict", message: "node node-1 is registered as Compute, not Requester" });
  });

  it("deletes a node; its next registration starts a new lifecycle with default membership", () => {
    const g = given([registered("APPROVED"), deleted]);
    expect(g.state).toMatchObject({ registered: false, deleted: true });
    g.when({ type: "Register", info, manualApproval: true }).then([registered("PENDING", 2)]);
  });

  it("treats commands on an absent or deleted node as not found", () => {
    for (const type of ["Approve", "Reject", "Delete"] as const) {
      given().when({ type }).thenThrows({ code: "NotFound", message: "node not found: node-1" });
      given([registered(), deleted]).when({ type }).thenThrows({ code: "NotFound" });
    }
    given([registered(), deleted])
      .when({ type: "UpdateInfo", info })
      .thenThrows({ code: "NotFound", message: "node not registered: node-1" });
  });

  it("refuses to reject an orchestrator's node, or to delete it while it runs (HEALTHY)", () => {
    given([self])
      .when({ type: "Reject" })
      .thenThrows({ code: "Conflict", message: "node node-1 is the orchestrator and cannot be rejected" });
    given([self])
      .when({ type: "Delete" })
      .thenThrows({
        code: "Conflict",
        message:
          "node node-1 is a running orchestrator (HEALTHY) and cannot be deleted: stop it first; " +
          "its node turns UNHEALTHY, and can then be deleted",
      });
    // Back after a stop: running again, so refused again.
    given([self, unhealthy, { type: "NodeBecameHealthy", data: { NodeID: ID, Previous: "UNHEALTHY" } }])
      .when({ type: "Delete" })
      .thenThrows({ code: "Conflict" });
  });

  it("deletes an orchestrator's node that stopped or went silent (UNHEALTHY, UNKNOWN); it may register again", () => {
    const gone: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
    given([self, unhealthy]).when({ type: "Delete" }).then([gone]);
    given([self, unhealthy, unknown]).when({ type: "Delete" }).then([gone]);
    given([self, unhealthy, gone])
      .when({ type: "Register", info: { ...info, NodeType: "Requester" }, manualApproval: true })
      .then([{ ...self, data: { ...self.data, Lifecycle: 2 } }]);
  });
});

describe("node info", () => {
  it("records a changed report as NodeInfoUpdated naming the changed fields", () => {
    const changed = { ...info, Labels: { ...info.Labels, zone: "b" } };
    given([registered()])
      .when({ type: "UpdateInfo", info: changed })
      .then([{ type: "NodeInfoUpdated", data: { NodeID: ID, Info: changed, Changed: ["Labels"] } }]);
  });

  it("ignores list order when comparing reports", () => {
    const withEngines = {
      ...info,
      ComputeNodeInfo: { ...info.ComputeNodeInfo!, ExecutionEngines: ["docker", "wasm"] },
    };
    const reordered = { ...info, ComputeNodeInfo: { ...info.ComputeNodeInfo!, ExecutionEngines: ["wasm", "docker"] } };
    given([
      {
        type: "NodeRegistered",
        data: { NodeID: ID, NodeType: "Compute", Info: withEngines, Membership: "APPROVED", Lifecycle: 1 },
      },
    ])
      .when({ type: "UpdateInfo", info: reordered })
      .thenNothingHappened();
  });

  it("refuses info from a rejected node", () => {
    given([registered(), rejected])
      .when({ type: "UpdateInfo", info })
      .thenThrows({ code: "Rejected", message: "node registration rejected" });
  });

  it("refuses info that does not match the registered node", () => {
    given([registered()])
      .when({ type: "UpdateInfo", info: { ...info, NodeType: "Requester" } })
      .thenThrows({ code: "Conflict", message: "node info does not match registered node node-1 (Compute)" });
  });
});

describe("node health", () => {
  it("goes HEALTHY → UNHEALTHY → UNKNOWN → HEALTHY", () => {
    const lastHeartbeat = "2026-01-01T00:00:00.000Z";
    given([registered()])
      .when({ type: "MarkUnhealthy", lastHeartbeat, disconnectTimeoutMs: 60000 })
      .then([
        { type: "NodeBecameUnhealthy", data: { NodeID: ID, LastHeartbeat: lastHeartbeat, DisconnectTimeoutMs: 60000 } },
      ]);
    given([registered(), unhealthy])
      .when({ type: "MarkUnknown", lastHeartbeat: null, unknownTimeoutMs: 300000 })
      .then([unknown]);
    given([registered(), unhealthy, unknown])
      .when({ type: "MarkHealthy" })
      .then([{ type: "NodeBecameHealthy", data: { NodeID: ID, Previous: "UNKNOWN" } }]);
    given([registered(), unhealthy])
      .when({ type: "MarkHealthy" })
      .then([{ type: "NodeBecameHealthy", data: { NodeID: ID, Previous: "UNHEALTHY" } }]);
  });

  it("writes nothing for a healthy node's heartbeat or a repeated mark: deadlines may race heartbeats", () => {
    given([registered()]).when({ type: "MarkHealthy" }).thenNothingHappened();
    given([registered(), unhealthy])
      .when({ type: "MarkUnhealthy", lastHeartbeat: null, disconnectTimeoutMs: 1 })
      .thenNothingHappened();
    given([registered()]).when({ type: "MarkUnknown", lastHeartbeat: null, unknownTimeoutMs: 1 }).thenNothingHappened();
    given([registered(), deleted])
      .when({ type: "MarkUnhealthy", lastHeartbeat: null, disconnectTimeoutMs: 1 })
      .thenNothingHappened();
  });

  it("folds nothing its chart refuses (a damaged history): healthy straight to UNKNOWN, a registered node pre-authorised", () => {
    const state = given([registered("APPROVED")]).state;
    expect(nodeDecider.evolve(state, unknown, SPEC_TIME)).toBe(state);
    const preauthorized: NodeEvent = {
      type: "NodePreauthorized",
      data: { NodeID: ID, Reason: "new rack", By: { type: "operator", id: "alice" } },
    };
    expect(nodeDecider.evolve(state, preauthorized, SPEC_TIME)).toBe(state);
    // Registered again while rejected: the chart takes NodeRegistered only from absent.
    const rejectedState = given([registered(), rejected]).state;
    expect(nodeDecider.evolve(rejectedState, registered("APPROVED"), SPEC_TIME)).toBe(rejectedState);
  });

  it("keeps membership and health independent", () => {
    expect(given([registered(), unhealthy, rejected]).state).toMatchObject({
      membership: "REJECTED",
      health: "UNHEALTHY",
    });
  });

  it("starts every new lifecycle HEALTHY", () => {
    expect(given([registered(), unhealthy, unknown, deleted, registered("APPROVED", 2)]).state).toMatchObject({
      health: "HEALTHY",
      lifecycle: 2,
    });
  });
});

describe("the chart, decide and the fold", () => {
  it("agree on every state a random run of commands reaches", () => {
    const commands: NodeCommand[] = [
      { type: "Register", info, manualApproval: true },
      { type: "Register", info, manualApproval: false },
      { type: "UpdateInfo", info: { ...info, Labels: { zone: "z" } } },
      { type: "Approve" },
      { type: "Reject" },
      { type: "Delete" },
      { type: "MarkUnhealthy", lastHeartbeat: null, disconnectTimeoutMs: 1 },
      { type: "MarkUnknown", lastHeartbeat: null, unknownTimeoutMs: 1 },
      { type: "MarkHealthy" },
    ];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const seen = new Set<string>();
    for (let run = 0; run < 200; run++) {
      let state = nodeDecider.initialState(ID);
      for (let step = 0; step < 30; step++) {
        const command = commands[Math.floor(random() * commands.length)]!;
        const decision = nodeDecider.decide(command, state, { now: 0 });
        // Health marks are never refused: where the chart does not take their event they change nothing.
        if (command.type.startsWith("Mark")) expect(decision.ok).toBe(true);
        if (!decision.ok) continue;
        for (const e of decision.events) {
          const value = nodeTransitions.values[nodeChartIndex(state)]!;
          expect(chartStep(nodeChart, value, state, e), `${command.type} emits ${e.type}`).toBeDefined();
          state = nodeDecider.evolve(state, e, SPEC_TIME);
        }
        const resolved = nodeChart.resolveState({ value: nodeTransitions.values[nodeChartIndex(state)]! });
        expect(resolved.status).toBe("active");
        seen.add(JSON.stringify(resolved.value));
      }
    }
    // absent + 3 memberships × 3 healths
    expect(seen.size).toBe(10);
  });
});
