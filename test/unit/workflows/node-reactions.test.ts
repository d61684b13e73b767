import { describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../../src/events/store/event-store.ts";
import { EventEnvelope } from "../../../src/projections/event-envelope.ts";
import { nodeReactions, type NodeWorkQuery } from "../../../src/workflows/nodes/node-reactions.ts";

const recorded = (stream: string, type: string, data: unknown = {}): RecordedEvent => ({
  id: `id-${stream}-${type}`,
  type,
  stream,
  revision: 0,
  position: 1,
  time: "2026-01-01T00:00:00.000Z",
  data,
  metadata: {},
});

/** n-busy runs a batch execution, n-daemon a daemon one, n-back ran work lost while it was away, n-idle nothing. */
const query: NodeWorkQuery = {
  holdsWork: (id) => id === "n-busy" || id === "n-daemon",
  holdsDaemonWork: (id) => id === "n-daemon",
  mayRunLostWork: (id) => id === "n-back",
};
const react = (stream: string, type: string, data?: unknown) =>
  nodeReactions(query)
    .react(new EventEnvelope(recorded(stream, type, data)))
    .map((c) => `${c.handler} ${c.type} ${c.entityId}: ${c.reason}`);

describe("the node-reactions workflow: given a node's work, when its state changes, then", () => {
  it.each([
    ["node-n-busy", "NodeBecameUnhealthy", undefined, ["node-work QueueNodeLoss n-busy: node n-busy became UNHEALTHY"]],
    ["node-n-busy", "NodeBecameUnknown", undefined, ["node-work QueueNodeLoss n-busy: node n-busy became UNKNOWN"]],
    ["node-n-busy", "NodeRejected", undefined, ["node-work LoseNodeWork n-busy: node n-busy was rejected"]],
    ["node-n-busy", "NodeDeleted", undefined, ["node-work LoseNodeWork n-busy: node n-busy was deleted"]],
    ["node-n-back", "NodeBecameHealthy", undefined, ["node-work StopLostWork n-back: node n-back is back (HEALTHY)"]],
    ["node-n-back", "NodeApproved", undefined, ["node-work StopLostWork n-back: node n-back is back (approved)"]],
    [
      "node-n-daemon",
      "NodeInfoUpdated",
      { Changed: ["Labels"] },
      ["node-work CheckDaemonMatch n-daemon: node n-daemon's labels changed"],
    ],
    [
      "node-n-daemon",
      "NodeLabelsSet",
      { Set: { role: "core" }, Removed: [], Reset: [] },
      ["node-work CheckDaemonMatch n-daemon: node n-daemon's labels changed"],
    ],
    // No step for what changes nothing: nodes that run nothing (most node events), and info that is not labels.
    ["node-n-idle", "NodeBecameUnhealthy", undefined, []],
    ["node-n-idle", "NodeBecameUnknown", undefined, []],
    ["node-n-idle", "NodeDeleted", undefined, []],
    ["node-n-idle", "NodeRejected", undefined, []],
    ["node-n-busy", "NodeBecameHealthy", undefined, []],
    ["node-n-busy", "NodeInfoUpdated", { Changed: ["Labels"] }, []],
    ["node-n-daemon", "NodeInfoUpdated", { Changed: ["ComputeNodeInfo"] }, []],
    ["node-n-busy", "NodeRegistered", undefined, []],
    ["node-n-busy", "NodeCredentialRevoked", undefined, []],
    // Not a node's event.
    ["job-j-1", "NodeDeleted", undefined, []],
    ["execution-e-1", "ExecutionFailed", undefined, []],
  ] as const)("%s %s %j → %j", (stream, type, data, commands) => {
    expect(react(stream, type, data)).toEqual(commands);
  });
});

describe("the node-reactions workflow, when a node is back", () => {
  it("asks what it may still run as of its return's store position (the same answer on a replay)", () => {
    const asked: [string, number][] = [];
    const lostBefore: NodeWorkQuery = {
      ...query,
      mayRunLostWork: (id, at) => {
        asked.push([id, at]);
        return at > 40;
      },
    };
    const back = (position: number) =>
      nodeReactions(lostBefore)
        .react(new EventEnvelope({ ...recorded("node-n-1", "NodeBecameHealthy"), position }))
        .map((c) => c.type);
    expect([back(42), back(7)]).toEqual([["StopLostWork"], []]);
    expect(asked).toEqual([
      ["n-1", 42],
      ["n-1", 7],
    ]);
  });
});
