import { describe, expect, it } from "vitest";
import { PAUSED_RECHECK_MS } from "../../../../machines/reactions/decide-reactions.ts";
import type { EvictionPolicy, FleetHealth } from "../../../../machines/reactions/eviction-rule.ts";
import type { ReactionInput } from "../../../../machines/reactions/reaction-commands.ts";
import {
  isStoredReactionEvent,
  type ReactionEvent,
  type WaitingStanding,
} from "../../../../machines/reactions/reaction-events.ts";
import {
  reactionEventsOf,
  reactionRecordOf,
  type ReactionRecord,
} from "../../../../machines/reactions/reaction-records.ts";
import { reactionsDecider } from "../../../../machines/reactions/reactions-decider.ts";
import type { ReactionsState } from "../../../../machines/reactions/reactions-state.ts";

/** Kubernetes' defaults, as Shoal's: 0.1 nodes/s, 0.01 nodes/s, 0.55, 50 nodes. */
const POLICY: EvictionPolicy = { rate: 0.1, secondaryRate: 0.01, unhealthyThreshold: 0.55, largeClusterSize: 50 };
const T0 = 1_000_000;

/** A QueueNodeLoss step, as the workflow host records it for a node event. */
const step = (nodeId: string, health = "UNHEALTHY", eventId = `ev-${nodeId}-${health}`) => ({
  id: `step-${eventId}`,
  type: "WorkflowStepRecorded" as const,
  data: {
    Workflow: "node-reactions",
    Input: { EventID: eventId, Stream: `node-${nodeId}`, Type: `NodeBecame${health}`, Position: 1 },
    Commands: [
      {
        CommandID: `cmd-${eventId}`,
        Handler: "node-work",
        EntityID: nodeId,
        Type: "QueueNodeLoss",
        Reason: `node ${nodeId} became ${health}`,
      },
    ],
  },
  metadata: { correlationId: `corr-${eventId}` },
  at: T0,
});

const given = (...records: ReturnType<typeof step>[]): ReactionsState =>
  records.reduce(
    (s, r) => reactionEventsOf(r).reduce((acc, e) => reactionsDecider.evolve(acc, e), s),
    reactionsDecider.initialState(),
  );

const when = (state: ReactionsState, input: ReactionInput) => {
  const decision = reactionsDecider.decide(input, state);
  const after = decision.events.reduce((s, e) => reactionsDecider.evolve(s, e), state);
  return { ...decision, state: after };
};

/** A look at `now` over a fleet of `nodes` of which `unhealthy` are silent; each waiting node stands as given. */
const look = (
  now: number,
  fleet: FleetHealth,
  standing: Record<string, WaitingStanding>,
  transportDown = false,
): ReactionInput => ({
  type: "Look",
  now,
  transportDown,
  policy: POLICY,
  fleet,
  standing: new Map(Object.entries(standing)),
});

const released = (commands: ReturnType<typeof when>["commands"]) =>
  commands.map((c) => (c.type === "LoseSilentNodeWork" ? `${c.nodeId} ${c.health}: ${c.waiting.reason}` : c.type));
const nextLook = (state: ReactionsState) => reactionsDecider.deadlines(state)[0]?.at;

describe("node reactions, given a node's work, when its state changes, then", () => {
  it.each([
    [
      { type: "NodeWentSilent", nodeId: "n", health: "UNHEALTHY", holdsWork: true },
      "QueueNodeLoss: node n became UNHEALTHY",
    ],
    [
      { type: "NodeWentSilent", nodeId: "n", health: "UNKNOWN", holdsWork: true },
      "QueueNodeLoss: node n became UNKNOWN",
    ],
    [{ type: "NodeRemoved", nodeId: "n", how: "rejected", holdsWork: true }, "LoseNodeWork: node n was rejected"],
    [{ type: "NodeRemoved", nodeId: "n", how: "deleted", holdsWork: true }, "LoseNodeWork: node n was deleted"],
    [{ type: "NodeBack", nodeId: "n", how: "HEALTHY", mayRunLostWork: true }, "StopLostWork: node n is back (HEALTHY)"],
    [
      { type: "NodeBack", nodeId: "n", how: "approved", mayRunLostWork: true },
      "StopLostWork: node n is back (approved)",
    ],
    [{ type: "LabelsChanged", nodeId: "n", holdsDaemonWork: true }, "CheckDaemonMatch: node n's labels changed"],
    [{ type: "NodeWentSilent", nodeId: "n", health: "UNHEALTHY", holdsWork: false }, undefined],
    [{ type: "NodeRemoved", nodeId: "n", how: "deleted", holdsWork: false }, undefined],
    [{ type: "NodeBack", nodeId: "n", how: "HEALTHY", mayRunLostWork: false }, undefined],
    [{ type: "LabelsChanged", nodeId: "n", holdsDaemonWork: false }, undefined],
  ] as const)("%j → %s", (input, command) => {
    const { commands, events } = when(reactionsDecider.initialState(), input);
    expect(commands.map((c) => `${c.type}: ${"reason" in c ? c.reason : ""}`)).toEqual(command ? [command] : []);
    // The queue changes when the recorded step is applied, never before it is stored.
    expect(events).toEqual([]);
  });
});

describe("the silent nodes' queue", () => {
  it("a silent node with work is queued by its step, and its work is lost at once when the fleet is healthy", () => {
    const state = given(step("a"));
    expect([...state.waiting.values()]).toEqual([
      {
        nodeId: "a",
        reason: "node a became UNHEALTHY",
        causationId: "ev-a-UNHEALTHY",
        correlationId: "corr-ev-a-UNHEALTHY",
        queuedBy: "cmd-ev-a-UNHEALTHY",
      },
    ]);
    const then = when(state, look(T0, { nodes: 10, unhealthy: 1 }, { a: "UNHEALTHY" }));
    expect(released(then.commands)).toEqual(["a UNHEALTHY: node a became UNHEALTHY"]);
    expect(then.events).toContainEqual({
      type: "NodeLossReleased",
      nodeId: "a",
      health: "UNHEALTHY",
      tokens: 0,
      at: T0,
    });
    expect([...then.state.waiting.keys()]).toEqual([]);
    expect(nextLook(then.state)).toBeUndefined();
  });

  it("releases at the eviction rate, first come first: one at once, then one every 10 s, each at its deadline", () => {
    let state = given(step("a"), step("b", "UNKNOWN"), step("c"));
    const fleet = { nodes: 10, unhealthy: 3 };
    const all = { a: "UNHEALTHY", b: "UNKNOWN", c: "UNHEALTHY" } as const;
    let then = when(state, look(T0, fleet, all));
    expect(released(then.commands)).toEqual(["a UNHEALTHY: node a became UNHEALTHY"]);
    expect(nextLook(then.state)).toBe(T0 + 10_000);
    state = then.state;
    // Before its deadline: nothing.
    then = when(state, look(T0 + 9_999, fleet, all));
    expect(released(then.commands)).toEqual([]);
    expect(nextLook(then.state)).toBe(T0 + 10_000);
    then = when(then.state, look(T0 + 10_000, fleet, all));
    expect(released(then.commands)).toEqual(["b UNKNOWN: node b became UNKNOWN"]);
    expect(nextLook(then.state)).toBe(T0 + 20_000);
    then = when(then.state, look(T0 + 20_000, fleet, all));
    expect(released(then.commands)).toEqual(["c UNHEALTHY: node c became UNHEALTHY"]);
    expect(nextLook(then.state)).toBeUndefined();
  });

  it("pauses when much of a small fleet is silent, and looks again every PAUSED_RECHECK_MS", () => {
    const state = given(step("a"), step("b"), step("c"), step("d"));
    const silent = { a: "UNHEALTHY", b: "UNHEALTHY", c: "UNHEALTHY", d: "UNHEALTHY" } as const;
    const then = when(state, look(T0, { nodes: 6, unhealthy: 4 }, silent));
    expect(released(then.commands)).toEqual([]);
    expect(then.state.disruption).toBe("partial");
    expect(nextLook(then.state)).toBe(T0 + PAUSED_RECHECK_MS);
    expect([...then.state.waiting.keys()]).toEqual(["a", "b", "c", "d"]);
    // A pause saves up no token: once most are back, the next goes at once (the bucket kept its one), then 10 s later.
    const healed = when(
      then.state,
      look(T0 + 60_000, { nodes: 6, unhealthy: 2 }, { ...silent, c: "HEALTHY", d: "HEALTHY" }),
    );
    expect(released(healed.commands)).toEqual(["a UNHEALTHY: node a became UNHEALTHY"]);
    expect(nextLook(healed.state)).toBe(T0 + 70_000);
  });

  it("a node back, rejected or gone before its turn loses nothing here, and leaves the queue", () => {
    const state = given(step("a"), step("b"), step("c"), step("d"));
    const then = when(
      state,
      look(T0, { nodes: 100, unhealthy: 60 }, { a: "HEALTHY", b: "REJECTED", c: "UNHEALTHY" } as Record<
        string,
        WaitingStanding
      >),
    );
    expect(then.events.filter((e) => e.type === "NodeLossWithdrawn")).toEqual([
      { type: "NodeLossWithdrawn", nodeId: "a", standing: "HEALTHY" },
      { type: "NodeLossWithdrawn", nodeId: "b", standing: "REJECTED" },
      { type: "NodeLossWithdrawn", nodeId: "d", standing: undefined },
    ]);
    // Partial at the secondary rate: c still goes first, with the token the bucket held.
    expect(released(then.commands)).toEqual(["c UNHEALTHY: node c became UNHEALTHY"]);
    expect([...then.state.waiting.keys()]).toEqual([]);
  });

  it("rejected or deleted: a LoseNodeWork step loses the work at once and ends the node's wait; StopLostWork too", () => {
    const lostAtOnce = {
      ...step("a"),
      id: "step-reject",
      data: {
        ...step("a").data,
        Commands: [
          { CommandID: "x", Handler: "node-work", EntityID: "a", Type: "LoseNodeWork", Reason: "node a was rejected" },
        ],
      },
    };
    const back = {
      ...step("b"),
      id: "step-back",
      data: {
        ...step("b").data,
        Commands: [
          {
            CommandID: "y",
            Handler: "node-work",
            EntityID: "b",
            Type: "StopLostWork",
            Reason: "node b is back (HEALTHY)",
          },
        ],
      },
    };
    expect([...given(step("a"), step("b"), step("c"), lostAtOnce, back).waiting.keys()]).toEqual(["c"]);
  });

  it("nothing moves during the grace after a start or the transport's return; the grace's end is the next look", () => {
    const held = when(given(step("a")), { type: "HoldUntil", until: T0 + 60_000 }).state;
    // A shorter hold never shortens it.
    const still = when(held, { type: "HoldUntil", until: T0 + 1_000 }).state;
    expect(still.graceUntil).toBe(T0 + 60_000);
    const during = when(still, look(T0 + 30_000, { nodes: 10, unhealthy: 1 }, { a: "UNHEALTHY" }));
    expect(released(during.commands)).toEqual([]);
    expect(during.state.disruption).toBe("grace");
    expect(nextLook(during.state)).toBe(T0 + 60_000);
    const after = when(during.state, look(T0 + 60_000, { nodes: 10, unhealthy: 1 }, { a: "UNHEALTHY" }));
    expect(released(after.commands)).toEqual(["a UNHEALTHY: node a became UNHEALTHY"]);
  });

  it("nothing moves while the orchestrator's own transport is down, nor while no node is healthy", () => {
    const state = given(step("a"));
    const down = when(state, look(T0, { nodes: 10, unhealthy: 1 }, { a: "UNHEALTHY" }, true));
    expect(released(down.commands)).toEqual([]);
    expect(down.state.disruption).toBe("own-transport");
    expect(nextLook(down.state)).toBe(T0 + PAUSED_RECHECK_MS);
    const full = when(state, look(T0, { nodes: 3, unhealthy: 3 }, { a: "UNHEALTHY" }));
    expect(released(full.commands)).toEqual([]);
    expect(full.state.disruption).toBe("full");
  });

  it("the periodic check queues a silent node not already waiting, under the record's id, and nothing twice", () => {
    const state = given(step("a"));
    const found = (nodeId: string): ReactionInput => ({
      type: "NodeFoundSilent",
      nodeId,
      health: "UNKNOWN",
      why: "found by the periodic check",
      recordId: `check-${nodeId}`,
    });
    expect(when(state, found("a")).events).toEqual([]);
    const then = when(state, found("b"));
    expect(then.events).toEqual([
      {
        type: "NodeLossQueued",
        nodeId: "b",
        reason: "node b is UNKNOWN (found by the periodic check)",
        causationId: "",
        correlationId: "",
        queuedBy: "check-b",
      },
    ]);
    expect([...then.state.waiting.keys()]).toEqual(["a", "b"]);
  });

  it("a restart folds the same queue, in the same order, with the same reasons and the bucket, from the stream", () => {
    // A live run: five silent nodes, the first released at once, a back before its turn, one found by the check.
    const records: ReactionRecord[] = [];
    const recordOf = (e: ReactionEvent, id: string, at: number) =>
      isStoredReactionEvent(e) ? records.push({ id, metadata: {}, at, ...reactionRecordOf(e) }) : 0;
    let live = reactionsDecider.initialState();
    for (const n of ["n1", "n2", "n3", "n4", "n5"]) {
      records.push(step(n));
      live = reactionEventsOf(step(n)).reduce(reactionsDecider.evolve, live);
    }
    const standing = { n1: "UNHEALTHY", n2: "HEALTHY", n3: "UNKNOWN", n4: "UNHEALTHY", n5: "UNHEALTHY" } as const;
    const first = when(live, look(T0, { nodes: 20, unhealthy: 4 }, standing));
    first.events.forEach((e, i) => recordOf(e, `r${i}`, T0));
    const check = when(first.state, {
      type: "NodeFoundSilent",
      nodeId: "n6",
      health: "UNHEALTHY",
      why: "found by the periodic check",
      recordId: "check-n6",
    });
    check.events.forEach((e) => recordOf(e, "check-n6", T0 + 1));
    live = check.state;
    expect([...live.waiting.keys()]).toEqual(["n3", "n4", "n5", "n6"]);

    // The restart: a new process folds the stored records alone.
    const restarted = records
      .flatMap((r) => reactionEventsOf(r))
      .reduce(reactionsDecider.evolve, reactionsDecider.initialState());
    expect([...restarted.waiting.values()]).toEqual([...live.waiting.values()]);
    expect(restarted.bucket).toEqual({ tokens: 0, at: T0 });
    // And it goes on as the live one would have: the next after the grace, in the same order.
    const resumed = when(
      when(restarted, { type: "HoldUntil", until: T0 + 5_000 }).state,
      look(
        T0 + 10_000,
        { nodes: 20, unhealthy: 4 },
        { n3: "UNKNOWN", n4: "UNHEALTHY", n5: "UNHEALTHY", n6: "UNHEALTHY" },
      ),
    );
    expect(released(resumed.commands)).toEqual(["n3 UNKNOWN: node n3 became UNHEALTHY"]);
  });
});
