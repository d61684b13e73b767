import { describe, expect, it } from "vitest";
import { decideNode } from "../../../machines/node/decide-node.ts";
import type { NodeCommand } from "../../../machines/node/node-commands.ts";
import { replayNode } from "../../../machines/node/node-evolve.ts";
import { nodeHealth } from "../../../machines/node/node-machine.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import { computeInfo } from "../../support/fixtures.ts";

const ID = "node-1";
const info = computeInfo(ID);
const registered = (membership: "PENDING" | "APPROVED" = "PENDING", lifecycle = 1): NodeEvent => ({
  type: "NodeRegistered",
  data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: membership, Lifecycle: lifecycle },
});
const approved: NodeEvent = { type: "NodeApproved", data: { NodeID: ID, Previous: "PENDING" } };
const rejected: NodeEvent = { type: "NodeRejected", data: { NodeID: ID, Previous: "PENDING" } };
const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
const unhealthy: NodeEvent = { type: "NodeBecameUnhealthy", data: { NodeID: ID, LastHeartbeat: null, DisconnectTimeoutMs: 60000 } };
const unknown: NodeEvent = { type: "NodeBecameUnknown", data: { NodeID: ID, LastHeartbeat: null, UnknownTimeoutMs: 300000 } };

/** given (past events) → when (command) → then (events or refusal) */
function given(...history: NodeEvent[]) {
  const snapshot = replayNode(ID, history);
  return {
    when(command: NodeCommand) {
      return decideNode(snapshot, command);
    },
    snapshot,
  };
}

describe("node membership", () => {
  it("registers a new node as APPROVED by default", () => {
    const d = given().when({ type: "Register", info, manualApproval: false });
    expect(d).toMatchObject({ ok: true, events: [{ type: "NodeRegistered", data: { Membership: "APPROVED", Lifecycle: 1 } }] });
  });

  it("registers a new node as PENDING under manual approval", () => {
    const d = given().when({ type: "Register", info, manualApproval: true });
    expect(d).toMatchObject({ ok: true, events: [{ type: "NodeRegistered", data: { Membership: "PENDING" } }] });
  });

  it("registers the orchestrator's own node APPROVED even under manual approval", () => {
    const self = { ...computeInfo(ID), NodeType: "Requester" as const };
    const d = given().when({ type: "Register", info: self, manualApproval: true });
    expect(d).toMatchObject({ ok: true, events: [{ data: { NodeType: "Requester", Membership: "APPROVED" } }] });
  });

  it("approves a PENDING node", () => {
    expect(given(registered()).when({ type: "Approve" })).toMatchObject({ ok: true, events: [{ type: "NodeApproved", data: { Previous: "PENDING" } }] });
  });

  it("approves a REJECTED node", () => {
    expect(given(registered(), rejected).when({ type: "Approve" })).toMatchObject({ ok: true, events: [{ type: "NodeApproved", data: { Previous: "REJECTED" } }] });
  });

  it("refuses to approve an APPROVED node with a conflict", () => {
    expect(given(registered(), approved).when({ type: "Approve" })).toEqual({
      ok: false,
      refusal: { code: "Conflict", message: "node node-1 already approved" },
    });
  });

  it("rejects PENDING and APPROVED nodes", () => {
    expect(given(registered()).when({ type: "Reject" })).toMatchObject({ ok: true, events: [{ type: "NodeRejected", data: { Previous: "PENDING" } }] });
    expect(given(registered(), approved).when({ type: "Reject" })).toMatchObject({ ok: true, events: [{ data: { Previous: "APPROVED" } }] });
  });

  it("refuses to reject a REJECTED node", () => {
    expect(given(registered(), rejected).when({ type: "Reject" })).toMatchObject({ ok: false, refusal: { code: "Conflict", message: "node node-1 already rejected" } });
  });

  it("refuses a rejected node's registration with a reason", () => {
    expect(given(registered(), rejected).when({ type: "Register", info, manualApproval: false })).toEqual({
      ok: false,
      refusal: { code: "Rejected", message: "node has been rejected" },
    });
  });

  it("writes nothing when a registered node registers again with the same info", () => {
    expect(given(registered(), approved).when({ type: "Register", info, manualApproval: false })).toEqual({ ok: true, events: [], note: "node already registered" });
  });

  it("deletes a node; its next registration starts a new lifecycle with default membership", () => {
    const g = given(registered("APPROVED"), deleted);
    expect(g.snapshot.matches("absent")).toBe(true);
    expect(g.when({ type: "Register", info, manualApproval: true })).toMatchObject({
      ok: true,
      events: [{ type: "NodeRegistered", data: { Membership: "PENDING", Lifecycle: 2 } }],
    });
  });

  it("treats commands on an absent or deleted node as not found", () => {
    for (const type of ["Approve", "Reject", "Delete"] as const) {
      expect(given().when({ type })).toMatchObject({ ok: false, refusal: { code: "NotFound" } });
      expect(given(registered(), deleted).when({ type })).toMatchObject({ ok: false, refusal: { code: "NotFound" } });
    }
    expect(given(registered(), deleted).when({ type: "UpdateInfo", info })).toMatchObject({ ok: false, refusal: { code: "NotFound", message: "node not registered: node-1" } });
  });

  it("refuses to reject or delete the orchestrator's own node", () => {
    const self: NodeEvent = { type: "NodeRegistered", data: { NodeID: ID, NodeType: "Requester", Info: { ...info, NodeType: "Requester" }, Membership: "APPROVED", Lifecycle: 1 } };
    expect(given(self).when({ type: "Reject" })).toMatchObject({ ok: false, refusal: { code: "Conflict" } });
    expect(given(self).when({ type: "Delete" })).toMatchObject({ ok: false, refusal: { code: "Conflict" } });
  });
});

describe("node info", () => {
  it("records a changed report as NodeInfoUpdated naming the changed fields", () => {
    const changed = { ...info, Labels: { ...info.Labels, zone: "b" } };
    expect(given(registered()).when({ type: "UpdateInfo", info: changed })).toMatchObject({
      ok: true,
      events: [{ type: "NodeInfoUpdated", data: { Changed: ["Labels"] } }],
    });
  });

  it("ignores list order when comparing reports", () => {
    const withEngines = { ...info, ComputeNodeInfo: { ...info.ComputeNodeInfo!, ExecutionEngines: ["docker", "wasm"] } };
    const reordered = { ...info, ComputeNodeInfo: { ...info.ComputeNodeInfo!, ExecutionEngines: ["wasm", "docker"] } };
    const g = given({ type: "NodeRegistered", data: { NodeID: ID, NodeType: "Compute", Info: withEngines, Membership: "APPROVED", Lifecycle: 1 } });
    expect(g.when({ type: "UpdateInfo", info: reordered })).toEqual({ ok: true, events: [] });
  });

  it("refuses info from a rejected node", () => {
    expect(given(registered(), rejected).when({ type: "UpdateInfo", info })).toMatchObject({ ok: false, refusal: { code: "Rejected", message: "node registration rejected" } });
  });
});

describe("node health", () => {
  it("goes HEALTHY → UNHEALTHY → UNKNOWN → HEALTHY", () => {
    const mark = { type: "MarkUnhealthy" as const, lastHeartbeat: "2026-01-01T00:00:00.000Z", disconnectTimeoutMs: 60000 };
    expect(given(registered()).when(mark)).toMatchObject({ ok: true, events: [{ type: "NodeBecameUnhealthy" }] });
    expect(given(registered(), unhealthy).when({ type: "MarkUnknown", lastHeartbeat: null, unknownTimeoutMs: 300000 })).toMatchObject({
      ok: true,
      events: [{ type: "NodeBecameUnknown" }],
    });
    expect(given(registered(), unhealthy, unknown).when({ type: "MarkHealthy" })).toMatchObject({ ok: true, events: [{ type: "NodeBecameHealthy", data: { Previous: "UNKNOWN" } }] });
  });

  it("writes nothing for a healthy node's heartbeat or a repeated mark", () => {
    expect(given(registered()).when({ type: "MarkHealthy" })).toEqual({ ok: true, events: [] });
    expect(given(registered(), unhealthy).when({ type: "MarkUnhealthy", lastHeartbeat: null, disconnectTimeoutMs: 1 })).toEqual({ ok: true, events: [] });
    expect(given(registered()).when({ type: "MarkUnknown", lastHeartbeat: null, unknownTimeoutMs: 1 })).toEqual({ ok: true, events: [] });
  });

  it("keeps membership and health independent", () => {
    const s = replayNode(ID, [registered(), unhealthy, rejected]);
    expect(s.context.membership).toBe("REJECTED");
    expect(nodeHealth(s)).toBe("UNHEALTHY");
  });

  it("starts every new lifecycle HEALTHY", () => {
    expect(nodeHealth(replayNode(ID, [registered(), unhealthy, unknown, deleted, registered("APPROVED", 2)]))).toBe("HEALTHY");
  });
});
