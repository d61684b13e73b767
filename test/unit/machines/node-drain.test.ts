import { describe, expect, it } from "vitest";
import type { NodeCommand } from "../../../machines/node/node-commands.ts";
import { nodeDecider } from "../../../machines/node/node-decider.ts";
import { isSchedulable, unschedulableReason } from "../../../machines/node/node-state.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import { SPEC_TIME, deciderSpec } from "../../support/decider-spec.ts";
import { computeInfo } from "../../support/fixtures.ts";

const ID = "node-1";
const info = computeInfo(ID);
const given = deciderSpec(nodeDecider, ID);
const registered: NodeEvent = {
  type: "NodeRegistered",
  data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: "APPROVED", Lifecycle: 1 },
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
const DEADLINE = "2026-01-01T00:10:00.000Z";
const drain: NodeCommand = {
  type: "Drain",
  deadline: DEADLINE,
  keepDaemon: false,
  reason: "kernel upgrade",
  by: { type: "operator", id: "admin" },
};
const started: NodeEvent = {
  type: "NodeDrainStarted",
  data: {
    NodeID: ID,
    Deadline: DEADLINE,
    KeepDaemon: false,
    Reason: "kernel upgrade",
    By: { type: "operator", id: "admin" },
  },
};
const completed: NodeEvent = { type: "NodeDrainCompleted", data: { NodeID: ID, DaemonStopped: 0 } };
const left = [{ executionId: "e-1", jobId: "j-1", jobType: "service" }];
const expired: NodeEvent = {
  type: "NodeDrainDeadlineReached",
  data: { NodeID: ID, Deadline: DEADLINE, Left: [{ ExecutionID: "e-1", JobID: "j-1", JobType: "service" }] },
};

describe("drain", () => {
  it("a drain starts with its absolute deadline, the daemon choice, the reason and who asked", () => {
    given([registered]).when(drain).then([started]);
  });

  it("a draining node is not schedulable, and says why", () => {
    const state = given([registered, started]).state;
    expect(state.drain).toEqual({
      status: "draining",
      deadline: DEADLINE,
      keepDaemon: false,
      reason: "kernel upgrade",
      by: { type: "operator", id: "admin" },
      startedAt: SPEC_TIME,
    });
    expect(isSchedulable(state)).toBe(false);
    expect(unschedulableReason(state)).toBe("node is draining");
    expect(isSchedulable(given([registered]).state)).toBe(true);
  });

  it("a drain under way may be drained again: the new deadline replaces the old", () => {
    const later = { ...drain, deadline: "2026-01-01T01:00:00.000Z", keepDaemon: true };
    given([registered, started])
      .when(later)
      .then([
        {
          type: "NodeDrainStarted",
          data: { ...started.data, Deadline: later.deadline, KeepDaemon: true },
        } as NodeEvent,
      ]);
  });

  it("the workflow completes it: the node stays unschedulable (drained) until an undrain", () => {
    given([registered, started]).when({ type: "CompleteDrain", daemonStopped: 0 }).then([completed]);
    const state = given([registered, started, completed]).state;
    expect(state.drain?.status).toBe("drained");
    expect(unschedulableReason(state)).toBe("node is drained");
  });

  it("its deadline ends it naming what was left", () => {
    given([registered, started]).when({ type: "ExpireDrain", left }).then([expired]);
    const state = given([registered, started, expired]).state;
    expect(state.drain).toMatchObject({ status: "expired", left: 1 });
    expect(isSchedulable(state)).toBe(false);
  });

  it("a completion or a deadline after the drain ended does nothing (a race, a replay)", () => {
    given([registered, started, completed]).when({ type: "ExpireDrain", left }).thenNothingHappened();
    given([registered, started, expired]).when({ type: "CompleteDrain", daemonStopped: 0 }).thenNothingHappened();
    given([registered]).when({ type: "CompleteDrain", daemonStopped: 0 }).thenNothingHappened();
  });

  it("an undrain ends a drain under way or releases a drained node; the node takes work again", () => {
    given([registered, started])
      .when({ type: "Undrain" })
      .then([{ type: "NodeUndrained", data: { NodeID: ID, Previous: "draining" } }]);
    given([registered, started, expired])
      .when({ type: "Undrain" })
      .then([{ type: "NodeUndrained", data: { NodeID: ID, Previous: "expired" } }]);
    const state = given([
      registered,
      started,
      completed,
      { type: "NodeUndrained", data: { NodeID: ID, Previous: "drained" } },
    ]).state;
    expect(state.drain).toBeUndefined();
    expect(isSchedulable(state)).toBe(true);
  });

  it("a delete ends the drain with the node's lifecycle: registered again, the node is schedulable", () => {
    const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
    const state = given([
      registered,
      started,
      deleted,
      { ...registered, data: { ...registered.data, Lifecycle: 2 } } as NodeEvent,
    ]).state;
    expect(state.drain).toBeUndefined();
    expect(isSchedulable(state)).toBe(true);
  });

  it("refuses an undrain of a node that is not drained, a drain of the orchestrator, and of an unknown node", () => {
    given([registered])
      .when({ type: "Undrain" })
      .thenThrows({ code: "Conflict", message: "node node-1 is not drained" });
    given([self])
      .when(drain)
      .thenThrows({ code: "Conflict", message: "node node-1 is the orchestrator and cannot be drained" });
    given().when(drain).thenThrows({ code: "NotFound", message: "node not found: node-1" });
  });
});
