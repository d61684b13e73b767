import { describe, expect, it } from "vitest";
import { evolveNode } from "../../../machines/node/evolve-node.ts";
import { initialNodeState, type NodeState } from "../../../machines/node/node-state.ts";
import { nodeEvents } from "../../../src/events/catalog/node-event-codec.ts";
import { NODE_EVENT_TYPES, type NodeEvent, type NodeEventType } from "../../../src/events/catalog/node-events.ts";
import { computeInfo } from "../../support/fixtures.ts";

const T = "2026-01-01T00:00:00.000Z";
const KEY = "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/** Data that throws when any part of it is looked at. */
const untouchable = new Proxy(
  {},
  {
    get: (_t, key) => {
      throw new Error(`the fold read data.${String(key)}`);
    },
    has: () => {
      throw new Error("the fold looked into the data");
    },
    ownKeys: () => {
      throw new Error("the fold listed the data");
    },
  },
);

/** Valid data of every type, for the eager fold to compare with. */
const DATA: Record<NodeEventType, unknown> = {
  NodeRegistered: { NodeID: "n1", NodeType: "Compute", Info: computeInfo("n1"), Membership: "PENDING", Lifecycle: 1 },
  NodeApproved: { NodeID: "n1", Previous: "PENDING" },
  NodeRejected: { NodeID: "n1", Previous: "APPROVED" },
  NodeDeleted: { NodeID: "n1", Membership: "APPROVED" },
  NodeInfoUpdated: { NodeID: "n1", Info: computeInfo("n1", { zone: "b" }), Changed: ["Labels"] },
  NodeBecameUnhealthy: { NodeID: "n1", LastHeartbeat: T, DisconnectTimeoutMs: 1000 },
  NodeBecameUnknown: { NodeID: "n1", LastHeartbeat: null, UnknownTimeoutMs: 5000 },
  NodeBecameHealthy: { NodeID: "n1", Previous: "UNKNOWN" },
  NodeCredentialBound: { NodeID: "n1", PublicKey: KEY, Reinstated: false },
  NodeCredentialRevoked: { NodeID: "n1", PublicKey: KEY, Reason: "rejected" },
  NodeCordoned: { NodeID: "n1", Reason: "disk failing", By: { type: "operator", id: "alice" } },
  NodeUncordoned: { NodeID: "n1", Reason: "disk replaced" },
  NodeLabelsSet: { NodeID: "n1", Set: { zone: "c" }, Removed: ["rack"], Reset: [] },
  NodePreauthorized: { NodeID: "n1", PublicKey: KEY, Reason: "new rack", By: { type: "operator", id: "alice" } },
  NodePreauthorizationRevoked: { NodeID: "n1" },
  NodeDrainStarted: {
    NodeID: "n1",
    Deadline: T,
    KeepDaemon: false,
    Reason: "kernel upgrade",
    By: { type: "operator", id: "admin" },
  },
  NodeDrainCompleted: { NodeID: "n1", DaemonStopped: 1 },
  NodeDrainDeadlineReached: {
    NodeID: "n1",
    Deadline: T,
    Left: [{ ExecutionID: "e-1", JobID: "j-1", JobType: "batch" }],
  },
  NodeUndrained: { NodeID: "n1", Previous: "drained" },
};

/**
 * States of every kind a node passes through: every type folded onto each, three times over (a
 * node becomes UNKNOWN only from UNHEALTHY: registered, unhealthy, unknown).
 */
function states(): NodeState[] {
  let all: NodeState[] = [initialNodeState("n1")];
  for (let round = 0; round < 3; round++) {
    const next: NodeState[] = [];
    for (const s of all)
      for (const type of NODE_EVENT_TYPES) next.push(evolveNode(s, { type, data: DATA[type] } as NodeEvent, T));
    all = [...new Map([...all, ...next].map((s) => [JSON.stringify(s), s])).values()];
  }
  return all;
}

describe("nodeEvents.decodedOnRead: the types a fold need not decode the data of", () => {
  const kinds = states();

  it("covers the states a node goes through (registered or not, deleted, with a credential, each health)", () => {
    expect(kinds.some((s) => !s.registered && !s.deleted)).toBe(true);
    expect(kinds.some((s) => s.deleted)).toBe(true);
    expect(kinds.some((s) => s.credential?.active === true)).toBe(true);
    expect(new Set(kinds.map((s) => s.health))).toEqual(new Set([undefined, "HEALTHY", "UNHEALTHY", "UNKNOWN"]));
    expect(new Set(kinds.map((s) => s.membership))).toEqual(new Set([undefined, "PENDING", "APPROVED", "REJECTED"]));
  });

  for (const type of NODE_EVENT_TYPES) {
    it(`${type}: ${nodeEvents.decodedOnRead.has(type) ? "folds alike without touching its data" : "reads its data, so it is decoded at once"}`, () => {
      let touched = 0;
      for (const state of kinds) {
        const expected = evolveNode(state, { type, data: DATA[type] } as NodeEvent, T);
        let folded: NodeState | undefined;
        try {
          folded = evolveNode(state, { type, data: untouchable } as NodeEvent, T);
        } catch {
          touched++;
          continue;
        }
        expect(folded).toEqual(expected);
      }
      // A type left out of the set must be one whose fold does read its data from some state.
      if (nodeEvents.decodedOnRead.has(type)) expect(touched).toBe(0);
      else expect(touched).toBeGreaterThan(0);
    });
  }
});
