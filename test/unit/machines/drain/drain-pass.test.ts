import { describe, expect, it } from "vitest";
import { drainDeadline } from "../../../../machines/drain/drain-deadline.ts";
import { daemonsStopped, drainPass, type DrainPlan } from "../../../../machines/drain/drain-pass.ts";
import { drainUnderWay } from "../../../../machines/drain/drain-under-way.ts";
import type { DrainedExecution } from "../../../../machines/drain/drained-execution.ts";
import {
  evolveDrainingNodes,
  initialDrainingNodes,
  withDrainingNode,
  withoutDrainingNode,
} from "../../../../machines/drain/draining-nodes.ts";
import { isUnderWay } from "../../../../machines/drain/execution-under-way.ts";
import { settleUndrained } from "../../../../machines/drain/settle-undrained.ts";
import { fold } from "../../../../machines/decider.ts";
import { initialExecutionState, type ExecutionState } from "../../../../machines/execution/execution-state.ts";
import type { ComputeStateName } from "../../../../machines/execution/execution-states.ts";
import type { JobType } from "../../../../machines/job/job-spec.ts";
import { nodeDecider } from "../../../../machines/node/node-decider.ts";
import type { NodeDrain } from "../../../../machines/node/node-state.ts";
import type { NodeEvent } from "../../../../src/events/catalog/node-events.ts";
import { SPEC_TIME } from "../../../support/decider-spec.ts";
import { computeInfo } from "../../../support/fixtures.ts";

/**
 * The drain's rules as given/when/then: given the node's events (folded with the node decider's own evolve, as its
 * actor folds them) and the executions under way on it, when a pass (or the deadline, or an undrain) looks, then this
 * plan. No orchestrator: the rules are pure.
 */
const N = "n-1";
const DEADLINE = "2026-01-01T00:10:00.000Z";
const DEADLINE_MS = Date.parse(DEADLINE);
const registered: NodeEvent = {
  type: "NodeRegistered",
  data: { NodeID: N, NodeType: "Compute", Info: computeInfo(N), Membership: "APPROVED", Lifecycle: 1 },
};
const startedWith = (over: { Deadline?: string; KeepDaemon?: boolean } = {}): NodeEvent => ({
  type: "NodeDrainStarted",
  data: {
    NodeID: N,
    Deadline: DEADLINE,
    KeepDaemon: false,
    Reason: "kernel upgrade",
    By: { type: "operator", id: "ops" },
    ...over,
  },
});
const started = startedWith();
const undrained: NodeEvent = { type: "NodeUndrained", data: { NodeID: N, Previous: "draining" } };
const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: N, Membership: "APPROVED" } };

/** The node's drain as its actor holds it after these events. */
const drainAfter = (events: readonly NodeEvent[]): NodeDrain | undefined =>
  fold(
    nodeDecider,
    N,
    events.map((event) => ({ event, time: SPEC_TIME })),
  ).drain;

const SINCE = Date.parse(SPEC_TIME);
function execution(
  id: string,
  jobType: JobType,
  computeState: ComputeStateName = "Running",
  over: Partial<ExecutionState> = {},
): ExecutionState {
  return {
    ...initialExecutionState(id),
    jobId: `job-${id}`,
    namespace: "default",
    nodeId: N,
    jobType,
    computeState,
    desiredState: "Running",
    createTime: SINCE - 60_000,
    modifyTime: SINCE - 60_000,
    ...over,
  };
}

function given(events: readonly NodeEvent[], executions: readonly DrainedExecution[] = []) {
  const drain = drainUnderWay(drainAfter(events));
  return {
    drain,
    /** One pass over the node. */
    whenPass(): { then(plan: DrainPlan): void; plan: DrainPlan } {
      if (drain === undefined) throw new Error("no drain under way: a pass has nothing to look at");
      const plan = drainPass({ nodeId: N, drain, executions });
      return { plan, then: (expected) => expect(plan).toEqual(expected) };
    },
  };
}

const moved = (e: ExecutionState) => ({
  execution: e,
  reason: `node ${N} is draining: the execution is stopped and its partition placed on another node`,
});
const COMPLETE = "nothing the drain had to move is left on the node";

describe("a drain's pass", () => {
  it("moves batch work only when another node can take its partition; otherwise it runs on and the drain waits", () => {
    const b1 = execution("b-1", "batch");
    const b2 = execution("b-2", "batch");
    given([registered, started], [{ execution: b1, placeableElsewhere: true }])
      .whenPass()
      .then({ cancel: [moved(b1)], place: [], left: 0, end: { daemons: [], complete: COMPLETE } });
    given([registered, started], [{ execution: b1, placeableElsewhere: false }])
      .whenPass()
      .then({ cancel: [], place: [], left: 1 });
    // Not asked (the host knows nothing of a chance elsewhere): it stays.
    given([registered, started], [{ execution: b1 }])
      .whenPass()
      .then({ cancel: [], place: [], left: 1 });
    given(
      [registered, started],
      [
        { execution: b1, placeableElsewhere: false },
        { execution: b2, placeableElsewhere: true },
      ],
    )
      .whenPass()
      .then({ cancel: [moved(b2)], place: [], left: 1 });
  });

  it("places a service's replacement while the original runs, and stops the original once the replacement is Running", () => {
    const s1 = execution("s-1", "service", "Running", { jobId: "job-s", partitionIndex: 0 });
    const s2 = execution("s-2", "service", "Running", { jobId: "job-s", partitionIndex: 1 });
    const placing = {
      jobId: "job-s",
      reason: `node ${N} is draining: a replacement starts before its execution stops`,
    };
    // Two partitions of one job without replacements: one placement of the job places both.
    given([registered, started], [{ execution: s1 }, { execution: s2 }])
      .whenPass()
      .then({ cancel: [], place: [placing], left: 2 });
    const starting = execution("r-1", "service", "BidAccepted", { jobId: "job-s", nodeId: "n-2" });
    given([registered, started], [{ execution: s1, replacement: starting }])
      .whenPass()
      .then({ cancel: [], place: [], left: 1 });
    const running = { ...starting, computeState: "Running" as const };
    given([registered, started], [{ execution: s1, replacement: running }])
      .whenPass()
      .then({
        cancel: [{ execution: s1, reason: `node ${N} is draining: replaced by r-1 on node n-2, which is running` }],
        place: [],
        left: 0,
        end: { daemons: [], complete: COMPLETE },
      });
  });

  it("leaves ops work to finish: the drain waits for it", () => {
    given([registered, started], [{ execution: execution("o-1", "ops") }])
      .whenPass()
      .then({ cancel: [], place: [], left: 1 });
  });

  it("stops daemon work last, once nothing else is left, and keeps it with KeepDaemon", () => {
    const daemon = execution("d-1", "daemon");
    const ops = execution("o-1", "ops");
    given([registered, started], [{ execution: daemon }, { execution: ops }])
      .whenPass()
      .then({ cancel: [], place: [], left: 1 });
    given([registered, started], [{ execution: daemon }])
      .whenPass()
      .then({ cancel: [], place: [], left: 0, end: { daemons: [daemon], complete: COMPLETE } });
    given([registered, startedWith({ KeepDaemon: true })], [{ execution: daemon }])
      .whenPass()
      .then({ cancel: [], place: [], left: 0, end: { daemons: [], complete: COMPLETE } });
    // Drained again with KeepDaemon while it drains: the later choice holds.
    given([registered, started, startedWith({ KeepDaemon: true })], [{ execution: daemon }])
      .whenPass()
      .then({ cancel: [], place: [], left: 0, end: { daemons: [], complete: COMPLETE } });
  });

  it("completes the drain when nothing is left, counting the daemon work it stopped since it began", () => {
    given([registered, started])
      .whenPass()
      .then({ cancel: [], place: [], left: 0, end: { daemons: [], complete: COMPLETE } });
    const drain = given([registered, started]).drain as NodeDrain;
    const stoppedNow = execution("d-1", "daemon", "Cancelled", { modifyTime: SINCE + 5_000 });
    const stoppedBefore = execution("d-0", "daemon", "Cancelled", { modifyTime: SINCE - 1 });
    const completed = execution("d-2", "daemon", "Completed", { modifyTime: SINCE + 5_000 });
    expect(daemonsStopped(drain, [stoppedNow, stoppedBefore, completed, execution("d-3", "daemon")])).toBe(1);
  });

  it("acts on nothing twice: an execution stopped or ended meanwhile is not under way, so the next pass leaves it be", () => {
    const batch = execution("b-1", "batch");
    const first = given([registered, started], [{ execution: batch, placeableElsewhere: true }]).whenPass().plan;
    expect(first.cancel.map((c) => c.execution.executionId)).toEqual(["b-1"]);
    // What the host finds on the node afterwards: the cancelled one (asked to stop, or Cancelled) is no longer there.
    const after = [
      { ...batch, desiredState: "Stopped" as const },
      { ...batch, computeState: "Cancelled" as const },
      execution("b-2", "batch", "Completed"),
      execution("b-3", "batch", "Failed"),
      execution("b-4", "batch", "BidRejected"),
    ];
    expect(after.filter(isUnderWay)).toEqual([]);
    expect(isUnderWay({ ...initialExecutionState("x") })).toBe(false);
    expect(isUnderWay(execution("b-5", "batch", "AskForBid"))).toBe(true);
    given(
      [registered, started],
      after.filter(isUnderWay).map((e) => ({ execution: e, placeableElsewhere: true })),
    )
      .whenPass()
      .then({ cancel: [], place: [], left: 0, end: { daemons: [], complete: COMPLETE } });
  });
});

describe("a drain's deadline", () => {
  const batch = execution("b-1", "batch");
  const service = execution("s-1", "service");
  const daemon = execution("d-1", "daemon");

  it("when it passes, names what is left (daemon work too) and says how much", () => {
    const drain = given([registered, started]).drain as NodeDrain;
    expect(drainDeadline(drain, [batch, service, daemon], DEADLINE_MS)).toEqual({
      type: "expire",
      left: [
        { executionId: "b-1", jobId: "job-b-1", jobType: "batch" },
        { executionId: "s-1", jobId: "job-s-1", jobType: "service" },
        { executionId: "d-1", jobId: "job-d-1", jobType: "daemon" },
      ],
      reason: `the drain deadline ${DEADLINE} passed with 3 executions left`,
    });
    expect(drainDeadline(drain, [service], DEADLINE_MS + 1)).toMatchObject({
      reason: `the drain deadline ${DEADLINE} passed with 1 execution left`,
    });
    expect(drainDeadline(drain, [], DEADLINE_MS)).toEqual({
      type: "expire",
      left: [],
      reason: `the drain deadline ${DEADLINE} passed with 0 executions left`,
    });
  });

  it("leaves kept daemon work out of what is left", () => {
    const drain = given([registered, startedWith({ KeepDaemon: true })]).drain as NodeDrain;
    expect(drainDeadline(drain, [daemon, service], DEADLINE_MS)).toMatchObject({
      type: "expire",
      left: [{ executionId: "s-1" }],
    });
  });

  it("drained again with a later deadline, the earlier one does nothing but arm the later", () => {
    const later = "2026-01-01T01:00:00.000Z";
    const drain = given([registered, started, startedWith({ Deadline: later })]).drain as NodeDrain;
    expect(drainDeadline(drain, [batch], DEADLINE_MS)).toEqual({ type: "later", at: Date.parse(later) });
  });
});

describe("an undrain of a drain under way", () => {
  const original = execution("s-1", "service");
  const elsewhere = (computeState: ComputeStateName) =>
    execution("r-1", "service", computeState, { jobId: original.jobId, nodeId: "n-2" });

  it("settles a half-done move: the replacement stays if it runs, else the original does", () => {
    const drain = drainAfter([registered, started, undrained]);
    expect(drain).toBeUndefined();
    expect(settleUndrained(N, drain, [{ execution: original, replacement: elsewhere("Running") }])).toEqual([
      { execution: original, reason: `the drain of node ${N} ended; r-1 on node n-2 already runs in its place` },
    ]);
    const pending = elsewhere("BidAccepted");
    expect(settleUndrained(N, drain, [{ execution: original, replacement: pending }])).toEqual([
      { execution: pending, reason: `the drain of node ${N} ended: the replacement of s-1 is not needed` },
    ]);
  });

  it("leaves alone what had no replacement, batch work, and a node drained again meanwhile", () => {
    const drain = drainAfter([registered, started, undrained]);
    expect(settleUndrained(N, drain, [{ execution: original }, { execution: execution("b-1", "batch") }])).toEqual([]);
    const again = drainAfter([registered, started, undrained, started]);
    expect(settleUndrained(N, again, [{ execution: original, replacement: elsewhere("Running") }])).toEqual([]);
  });
});

describe("which nodes are draining", () => {
  const at = (type: string, position: number, nodeId = N) => ({ type, nodeId, position });

  it("a drain started adds the node with its position; its end, an undrain or a delete drops it", () => {
    let state = evolveDrainingNodes(initialDrainingNodes(), at("NodeDrainStarted", 7));
    expect([...state]).toEqual([[N, 7]]);
    // Drained again: the newer start is the one the read model must show.
    state = evolveDrainingNodes(state, at("NodeDrainStarted", 9));
    expect(state.get(N)).toBe(9);
    for (const end of ["NodeDrainCompleted", "NodeDrainDeadlineReached", "NodeUndrained", "NodeDeleted"])
      expect(evolveDrainingNodes(state, at(end, 10)).has(N)).toBe(false);
  });

  it("what the node's actor shows ahead of the events: a drain under way kept, none dropped", () => {
    const started = evolveDrainingNodes(initialDrainingNodes(), at("NodeDrainStarted", 7));
    // The fold's own position stays: it has the node's latest start.
    expect(withDrainingNode(started, N, 3)).toBe(started);
    expect([...withDrainingNode(initialDrainingNodes(), N, 5)]).toEqual([[N, 5]]);
    expect(withoutDrainingNode(started, N).size).toBe(0);
    const none = initialDrainingNodes();
    expect(withoutDrainingNode(none, N)).toBe(none);
  });

  it("other events change nothing, and leave the state as it was", () => {
    const state = evolveDrainingNodes(initialDrainingNodes(), at("NodeDrainStarted", 7));
    expect(evolveDrainingNodes(state, at("NodeApproved", 8))).toBe(state);
    expect(evolveDrainingNodes(state, at("NodeDrainCompleted", 8, "n-2"))).toBe(state);
  });
});

describe("a node deleted mid-drain", () => {
  it("has no drain under way: no pass acts, its deadline does nothing, and it is no longer draining", () => {
    expect(drainUnderWay(drainAfter([registered, started]))).toBeDefined();
    expect(drainUnderWay(drainAfter([registered, started, deleted]))).toBeUndefined();
    expect(() => given([registered, started, deleted]).whenPass()).toThrow(/no drain under way/);
    const draining = evolveDrainingNodes(initialDrainingNodes(), { type: "NodeDrainStarted", nodeId: N, position: 3 });
    expect(evolveDrainingNodes(draining, { type: "NodeDeleted", nodeId: N, position: 4 }).size).toBe(0);
  });
});
