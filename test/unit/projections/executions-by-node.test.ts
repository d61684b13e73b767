import { describe, expect, it } from "vitest";
import type { ExecutionEvent } from "../../../src/events/catalog/execution-events.ts";
import type { JobType } from "../../../src/events/catalog/job-spec.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import type { EventEnvelope } from "../../../src/projections/event-envelope.ts";
import { JobViews } from "../../../src/projections/jobs/job-views.ts";
import { NODE_DISAPPEARED_MESSAGE, nodeLostMessage } from "../../../src/scheduler/job-outcome.ts";
import { envelopeOf } from "../../support/recorded-event.ts";

/** Recorded events in store order: each `given` entry is stored after the ones before it. */
class Given {
  readonly events: EventEnvelope[] = [];

  private add(stream: string, event: ExecutionEvent | NodeEvent): this {
    this.events.push(envelopeOf(stream, event, this.events.length + 1));
    return this;
  }

  /** Where the last event stands: what a reaction to it is asked at. */
  get last(): number {
    return this.events.length;
  }

  created(id: string, nodeId: string, jobType: JobType = "batch"): this {
    return this.add(`execution-${id}`, {
      type: "ExecutionCreated",
      data: {
        ExecutionID: id,
        JobID: "j-1",
        Namespace: "default",
        NodeID: nodeId,
        JobType: jobType,
        JobVersion: 1,
        PartitionIndex: 0,
        DesiredState: jobType === "daemon" ? "Running" : "Pending",
        AllocatedResources: { CPU: 0.1, Memory: 1, Disk: 0, GPU: 0 },
        ExecutionTimeout: 0,
        TimeoutBuffer: 0,
        PreviousExecution: "",
      },
    });
  }

  failed(id: string, message: string): this {
    return this.add(`execution-${id}`, {
      type: "ExecutionFailed",
      data: { ExecutionID: id, Previous: "New", Cause: "Orchestrator", Message: message },
    });
  }

  /** It ends for a reason of its own (not its node's loss). */
  ended(id: string): this {
    return this.failed(id, "the command exited with code 3");
  }

  healthy(nodeId: string): this {
    return this.add(`node-${nodeId}`, { type: "NodeBecameHealthy", data: { NodeID: nodeId, Previous: "UNHEALTHY" } });
  }

  approved(nodeId: string): this {
    return this.add(`node-${nodeId}`, { type: "NodeApproved", data: { NodeID: nodeId, Previous: "REJECTED" } });
  }

  /** The job read model folded from scratch over every event so far (a restart with no snapshot). */
  folded(): JobViews {
    const views = new JobViews();
    for (const e of this.events) views.handleEnvelope(e);
    return views;
  }
}

const lost = (nodeId: string) => nodeLostMessage(nodeId, "became UNHEALTHY");

describe("executions by node in the job read model: given recorded events, then", () => {
  it("the nodes holding work under way, and daemon work, until it ends", () => {
    const given = new Given().created("e1", "n-1").created("e2", "n-2").created("e3", "n-3", "daemon").ended("e2");
    const { byNode } = given.folded();
    expect(["n-1", "n-2", "n-3"].map((n) => byNode.holdsWork(n))).toEqual([true, false, true]);
    expect(["n-1", "n-3"].map((n) => byNode.holdsDaemonWork(n))).toEqual([false, true]);
    expect(byNode.nodesWithWork().sort()).toEqual(["n-1", "n-3"]);
    expect(byNode.underWayOn("n-3").map((e) => e.executionId)).toEqual(["e3"]);

    const ended = given.ended("e1").folded().byNode;
    expect(ended.holdsWork("n-1")).toBe(false);
    expect(ended.nodesWithWork()).toEqual(["n-3"]);
  });

  it("an execution failed as lost with its node is what the node is told to stop when back, once", () => {
    const given = new Given()
      .created("e1", "n-1")
      .created("e2", "n-1")
      .created("e3", "n-2")
      .failed("e1", lost("n-1"))
      .ended("e2")
      .failed("e3", NODE_DISAPPEARED_MESSAGE);
    let byNode = given.folded().byNode;
    // Not back yet: what it would be told now.
    expect(byNode.holdsWork("n-1")).toBe(false);
    expect(byNode.lostBefore("n-1")).toEqual(["e1"]);
    expect(byNode.lostBefore("n-2")).toEqual(["e3"]);

    given.healthy("n-1");
    const back = given.last;
    byNode = given.folded().byNode;
    // The reaction to the return, whether it runs before or after the read model folded it.
    expect(byNode.mayRunLostWork("n-1", back)).toBe(true);
    expect(byNode.lostBefore("n-1", back)).toEqual(["e1"]);
    // Told at that return: nothing more to tell since.
    expect(byNode.mayRunLostWork("n-1")).toBe(false);

    // Back again (an approval this time) with nothing lost meanwhile: nothing to tell, the first one forgotten.
    given.approved("n-1");
    const again = given.last;
    byNode = given.folded().byNode;
    expect(byNode.mayRunLostWork("n-1", again)).toBe(false);
    expect(byNode.lostBefore("n-1", back)).toEqual(["e1"]);

    // Lost again, then back: only the new loss.
    given.created("e4", "n-1").failed("e4", lost("n-1")).healthy("n-1").healthy("n-1");
    byNode = given.folded().byNode;
    expect(byNode.lostBefore("n-1", given.last - 1)).toEqual(["e4"]);
    expect(byNode.lostBefore("n-1", given.last)).toEqual([]);
    // Three returns after it, e1 is forgotten.
    expect(byNode.lostBefore("n-1", back)).toEqual([]);
    expect(byNode.snapshot().lost).toEqual([
      ["n-1", [{ id: "e4", at: 10 }]],
      ["n-2", [{ id: "e3", at: 6 }]],
    ]);
  });

  it("the reaction to a return asked before the read model folded it gets the same answer", () => {
    const given = new Given().created("e1", "n-1").failed("e1", lost("n-1"));
    const before = given.folded().byNode;
    given.healthy("n-1");
    expect(before.lostBefore("n-1", given.last)).toEqual(["e1"]);
    expect(given.folded().byNode.lostBefore("n-1", given.last)).toEqual(["e1"]);
  });

  it("a restart from the snapshot answers as the running fold, and goes on folding as it would", () => {
    const given = new Given()
      .created("e1", "n-1")
      .created("e2", "n-1", "daemon")
      .created("e3", "n-2")
      .failed("e3", lost("n-2"))
      .healthy("n-2")
      .created("e4", "n-2")
      .failed("e4", lost("n-2"));
    const running = given.folded();
    const restarted = new JobViews();
    restarted.seed(JSON.parse(JSON.stringify(running.snapshot())));
    given.healthy("n-2").ended("e1");
    const tail = given.events.slice(-2);
    for (const e of tail) {
      running.handleEnvelope(e);
      restarted.handleEnvelope(e);
    }
    const fromScratch = given.folded();
    for (const views of [running, restarted, fromScratch]) {
      const { byNode } = views;
      expect(byNode.nodesWithWork()).toEqual(["n-1"]);
      expect([byNode.holdsDaemonWork("n-1"), byNode.holdsWork("n-2")]).toEqual([true, false]);
      expect(byNode.lostBefore("n-2", 5)).toEqual(["e3"]);
      expect(byNode.lostBefore("n-2", 8)).toEqual(["e4"]);
      expect(byNode.mayRunLostWork("n-2")).toBe(false);
    }
  });
});

/** A small deterministic generator (the same cases on every run). */
function randomOf(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s % n;
  };
}

const RETURNS = new Set(["NodeBecameHealthy", "NodeApproved"]);

/** The positions of the node's returns. */
function returnsOf(given: Given, nodeId: string): number[] {
  const out: number[] = [];
  given.events.forEach(({ recorded }, i) => {
    if (RETURNS.has(recorded.type) && recorded.stream === `node-${nodeId}`) out.push(i + 1);
  });
  return out;
}

/**
 * What a node back with the event at `at` is told to stop, straight from the events: the executions failed as lost
 * with it after its last return before `at`, and before `at`.
 */
function expectedLostBefore(given: Given, nodeId: string, at = Number.POSITIVE_INFINITY): string[] {
  const since = returnsOf(given, nodeId).reduce((last, r) => (r < at ? r : last), Number.NEGATIVE_INFINITY);
  const told: string[] = [];
  given.events.forEach(({ recorded }, i) => {
    const data = recorded.data as { ExecutionID?: string; Message?: string };
    if (recorded.type === "ExecutionFailed" && data.Message === lost(nodeId) && i + 1 > since && i + 1 < at)
      told.push(data.ExecutionID ?? "");
  });
  return told;
}

/** Executions created on three nodes, each lost with its node or ended, the nodes coming back now and then. */
function randomHistory(seed: number, length: number): Given {
  const random = randomOf(seed);
  const given = new Given();
  const underWay: { id: string; nodeId: string }[] = [];
  let next = 0;
  while (given.events.length < length) {
    const nodeId = `n-${random(3) + 1}`;
    const action = random(10);
    if (action < 3 || underWay.length === 0) {
      const id = `e${++next}`;
      given.created(id, nodeId);
      underWay.push({ id, nodeId });
    } else if (action < 5) {
      const [e] = underWay.splice(random(underWay.length), 1);
      if (e) given.failed(e.id, lost(e.nodeId));
    } else if (action < 6) {
      const [e] = underWay.splice(random(underWay.length), 1);
      if (e) given.ended(e.id);
    } else if (action < 9) given.healthy(nodeId);
    else given.approved(nodeId);
  }
  return given;
}

const NODES = ["n-1", "n-2", "n-3"];

/** What each node is told at its last two returns and now: as `lostBefore` answers it. */
function answers(given: Given, lostBefore: (nodeId: string, at?: number) => string[]): string[][][] {
  return NODES.map((nodeId) => [...returnsOf(given, nodeId).slice(-2), undefined].map((at) => lostBefore(nodeId, at)));
}

describe("executions by node: what a node's returns cost", () => {
  it("a node that comes back with nothing lost with it leaves no return behind, in memory or in the snapshot", () => {
    const given = new Given();
    for (let round = 0; round < 4; round++) for (const n of ["n-1", "n-2", "n-3"]) given.healthy(n);
    given.created("e1", "n-1").failed("e1", lost("n-1")).healthy("n-1").healthy("n-2");
    const snapshot = given.folded().byNode.snapshot();
    expect(snapshot.returns).toEqual([["n-1", [given.last - 1]]]);
    expect(snapshot.lost).toEqual([["n-1", [{ id: "e1", at: given.last - 2 }]]]);
  });

  it("once what was lost with a node is forgotten, so are its returns", () => {
    const given = new Given().created("e1", "n-1").failed("e1", lost("n-1"));
    given.healthy("n-1").healthy("n-1").healthy("n-1");
    expect(given.folded().byNode.snapshot()).toEqual({ lost: [], returns: [] });
  });

  it("a snapshot that holds returns of nodes with nothing lost seeds none of them", () => {
    const restarted = new JobViews();
    restarted.seed({
      anchor: { position: 9, stream: "node-n-3", revision: 4, id: "x" },
      jobs: [],
      executions: [],
      byNode: {
        lost: [["n-1", [{ id: "e1", at: 5 }]]],
        returns: [
          ["n-1", [2, 7]],
          ["n-2", [3, 6, 8]],
          ["n-3", [9]],
        ],
      },
    });
    expect(restarted.byNode.snapshot().returns).toEqual([["n-1", [2, 7]]]);
    expect(restarted.byNode.lostBefore("n-1", 7)).toEqual(["e1"]);
    expect(restarted.byNode.lostBefore("n-1")).toEqual([]);
  });

  it("answers as the events say, folded from scratch or restarted from a snapshot at any point", () => {
    let told = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const given = randomHistory(seed, 60);
      const expected = answers(given, (nodeId, at) => expectedLostBefore(given, nodeId, at));
      told += expected.flat(2).length;
      const { byNode } = given.folded();
      expect(
        answers(given, (n, at) => byNode.lostBefore(n, at)),
        `seed ${seed}, from scratch`,
      ).toEqual(expected);
      for (let cut = 5; cut < given.events.length; cut += 11) {
        const running = new JobViews();
        for (const e of given.events.slice(0, cut)) running.handleEnvelope(e);
        const restarted = new JobViews();
        restarted.seed(JSON.parse(JSON.stringify(running.snapshot())));
        for (const e of given.events.slice(cut)) restarted.handleEnvelope(e);
        const answered = answers(given, (n, at) => restarted.byNode.lostBefore(n, at));
        expect(answered, `seed ${seed}, restarted after ${cut} events`).toEqual(expected);
      }
    }
    // The histories do lose work that returning nodes are told about.
    expect(told).toBeGreaterThan(40);
  });
});

describe("execution counts in the job read model: given recorded events, then", () => {
  it("every state with its count, moved as executions change, and the same once seeded from a snapshot", () => {
    const given = new Given().created("e1", "n-1").created("e2", "n-2").created("e3", "n-3").ended("e2");
    const views = given.folded();
    const counts = (v: JobViews) => Object.fromEntries(v.counts.executionCounts().map((c) => [c.state, c.count]));
    expect(counts(views)).toMatchObject({ New: 2, Failed: 1, Running: 0, Completed: 0 });
    expect(Object.keys(counts(views))).toHaveLength(11);
    const seeded = new JobViews();
    seeded.seed(views.snapshot()!);
    expect(counts(seeded)).toEqual(counts(views));
  });
});
