import { describe, expect, it } from "vitest";
import { nodeChart, nodeChartIndex, nodeTransitions } from "../../../machines/node/node-chart.ts";
import type { NodeCommand } from "../../../machines/node/node-commands.ts";
import { nodeDecider } from "../../../machines/node/node-decider.ts";
import type { NodeState } from "../../../machines/node/node-state.ts";
import { NODE_EVENT_TYPES, type NodeEvent } from "../../../src/events/catalog/node-events.ts";
import {
  expectDecideEmitsOnlyWhatTheChartTakes,
  expectEvolveFollowsTheChart,
  statesReached,
  type ChartedEntity,
} from "../../support/chart-agreement.ts";
import { SPEC_NOW } from "../../support/decider-spec.ts";
import { computeInfo } from "../../support/fixtures.ts";
import { stateKey } from "../../../machines/compile-chart.ts";

const ID = "n1";
const T = "2026-01-01T00:00:00.000Z";
const KEY = "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const OTHER_KEY = "UBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
const info = computeInfo(ID);
const by = { type: "operator", id: "alice" } as const;

const events: NodeEvent[] = [
  {
    type: "NodeRegistered",
    data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: "PENDING", Lifecycle: 1 },
  },
  {
    type: "NodeRegistered",
    data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: "APPROVED", Lifecycle: 1 },
  },
  {
    type: "NodeRegistered",
    data: {
      NodeID: ID,
      NodeType: "Requester",
      Info: { ...info, NodeType: "Requester" },
      Membership: "APPROVED",
      Lifecycle: 1,
    },
  },
  { type: "NodeApproved", data: { NodeID: ID, Previous: "PENDING" } },
  { type: "NodeRejected", data: { NodeID: ID, Previous: "APPROVED" } },
  { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } },
  { type: "NodeInfoUpdated", data: { NodeID: ID, Info: computeInfo(ID, { zone: "b" }), Changed: ["Labels"] } },
  { type: "NodeBecameUnhealthy", data: { NodeID: ID, LastHeartbeat: T, DisconnectTimeoutMs: 1000 } },
  { type: "NodeBecameUnknown", data: { NodeID: ID, LastHeartbeat: null, UnknownTimeoutMs: 5000 } },
  { type: "NodeBecameHealthy", data: { NodeID: ID, Previous: "UNKNOWN" } },
  { type: "NodeCredentialBound", data: { NodeID: ID, PublicKey: KEY, Reinstated: false } },
  { type: "NodeCredentialRevoked", data: { NodeID: ID, PublicKey: KEY, Reason: "rejected" } },
  { type: "NodeCordoned", data: { NodeID: ID, Reason: "disk failing", By: by } },
  { type: "NodeUncordoned", data: { NodeID: ID, Reason: "disk replaced" } },
  { type: "NodeLabelsSet", data: { NodeID: ID, Set: { zone: "c" }, Removed: ["rack"], Reset: [] } },
  { type: "NodePreauthorized", data: { NodeID: ID, PublicKey: KEY, Reason: "new rack", By: by } },
  { type: "NodePreauthorizationRevoked", data: { NodeID: ID } },
  { type: "NodeDrainStarted", data: { NodeID: ID, Deadline: T, KeepDaemon: false, Reason: "upgrade", By: by } },
  { type: "NodeDrainCompleted", data: { NodeID: ID, DaemonStopped: 1 } },
  {
    type: "NodeDrainDeadlineReached",
    data: { NodeID: ID, Deadline: T, Left: [{ ExecutionID: "e-1", JobID: "j-1", JobType: "batch" }] },
  },
  { type: "NodeUndrained", data: { NodeID: ID, Previous: "drained" } },
];

const node: ChartedEntity<NodeState, NodeCommand, NodeEvent> = {
  chart: nodeChart,
  decider: nodeDecider,
  id: ID,
  valueOf: (state) => nodeTransitions.values[nodeChartIndex(state)]!,
  events,
};

const commands: NodeCommand[] = [
  { type: "Register", info, manualApproval: true, publicKey: KEY },
  { type: "Register", info, manualApproval: false },
  { type: "Register", info: { ...info, NodeType: "Requester" }, manualApproval: true },
  { type: "Register", info: computeInfo(ID, { zone: "b" }), manualApproval: true, publicKey: OTHER_KEY },
  { type: "UpdateInfo", info: computeInfo(ID, { zone: "z" }) },
  { type: "Approve" },
  { type: "Reject" },
  { type: "Delete" },
  { type: "MarkUnhealthy", lastHeartbeat: null, disconnectTimeoutMs: 1 },
  { type: "MarkUnknown", lastHeartbeat: null, unknownTimeoutMs: 1 },
  { type: "MarkHealthy" },
  { type: "Cordon", reason: "r", by },
  { type: "Uncordon", reason: "u" },
  { type: "SetLabels", set: { a: "1" }, remove: [], reset: [] },
  { type: "Preauthorize", reason: "p", by },
  { type: "Preauthorize", publicKey: KEY, reason: "p", by },
  { type: "RevokePreauthorization" },
  { type: "Drain", deadline: T, keepDaemon: false, reason: "d", by },
  { type: "Undrain" },
  { type: "CompleteDrain", daemonStopped: 0 },
  { type: "ExpireDrain", left: [] },
];

// Registered, rejected, unhealthy, unknown: four events reach every state of the chart.
const states = statesReached(node, 4);

describe("the node chart", () => {
  it("has an absent state and, registered, membership × health as parallel regions", () => {
    expect(nodeTransitions.values.map(stateKey)).toHaveLength(1 + 3 * 3);
    expect(new Set(states.map((s) => nodeChartIndex(s)))).toEqual(new Set(nodeTransitions.values.map((_, i) => i)));
  });

  it("names only the stored event types, and every one of them", () => {
    expect([...nodeChart.root.events].sort()).toEqual([...NODE_EVENT_TYPES].sort());
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(NODE_EVENT_TYPES));
  });

  it("and evolve agree: where the chart takes an event, evolve goes there; where it refuses one, nothing changes", () => {
    const { taken, refused } = expectEvolveFollowsTheChart(node, states);
    // Every state of the chart met every event type, one way or the other.
    expect(new Set([...taken, ...refused]).size).toBe(nodeTransitions.values.length * NODE_EVENT_TYPES.length);
    expect(taken.has("registered.(health.healthy,membership.pending) × NodeApproved")).toBe(true);
    expect(refused.has("registered.(health.healthy,membership.approved) × NodeApproved")).toBe(true);
  });

  it("is asked by decide: no command emits an event the chart refuses in the state it is folded onto", () => {
    expect(expectDecideEmitsOnlyWhatTheChartTakes(node, states, commands, SPEC_NOW)).toBeGreaterThan(1000);
  });

  it("lets a registration in approved or pending as its data says", () => {
    const [pending, approved] = events;
    const absent = nodeDecider.initialState(ID);
    expect(nodeDecider.evolve(absent, pending!, T)).toMatchObject({ membership: "PENDING", health: "HEALTHY" });
    expect(nodeDecider.evolve(absent, approved!, T)).toMatchObject({ membership: "APPROVED", health: "HEALTHY" });
  });
});
