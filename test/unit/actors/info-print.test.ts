import { describe, expect, it } from "vitest";
import { nodeDecider } from "../../../machines/node/node-decider.ts";
import { infoPrint, knownNode, knownUnchanged } from "../../../src/actors/info-print.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import type { NodeInfo } from "../../../src/events/catalog/node-info.ts";
import { deciderSpec } from "../../support/decider-spec.ts";
import { computeInfo } from "../../support/fixtures.ts";

const ID = "node-1";
const info = computeInfo(ID, { zone: "a" });
const given = deciderSpec(nodeDecider, ID);
const registered = (registeredInfo: NodeInfo = info, membership: "PENDING" | "APPROVED" = "APPROVED"): NodeEvent => ({
  type: "NodeRegistered",
  data: { NodeID: ID, NodeType: registeredInfo.NodeType, Info: registeredInfo, Membership: membership, Lifecycle: 1 },
});
const rejected: NodeEvent = { type: "NodeRejected", data: { NodeID: ID, Previous: "APPROVED" } };
const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
const unhealthy: NodeEvent = {
  type: "NodeBecameUnhealthy",
  data: { NodeID: ID, LastHeartbeat: null, DisconnectTimeoutMs: 60000 },
};
const infoUpdated = (to: NodeInfo): NodeEvent => ({
  type: "NodeInfoUpdated",
  data: { NodeID: ID, Info: to, Changed: ["Labels"] },
});

const engines = (list: string[]): NodeInfo => ({
  ...info,
  ComputeNodeInfo: { ...info.ComputeNodeInfo!, ExecutionEngines: list },
});
const withEngines = engines(["docker", "wasm"]);
const relabelled = computeInfo(ID, { zone: "b" });
const reordered: NodeInfo = {
  BacalhauVersion: info.BacalhauVersion,
  ComputeNodeInfo: info.ComputeNodeInfo,
  Labels: { zone: "a", ...info.Labels },
  Hostname: info.Hostname,
  NodeType: "Compute",
  NodeID: ID,
};
const requester: NodeInfo = { ...info, NodeType: "Requester" };

/** Every pair below: what the manager knows of the node after this history, and an UpdateInfo with this info. */
const cases: {
  name: string;
  history: NodeEvent[];
  report: NodeInfo;
  unchanged: boolean;
  decides: "nothing" | "events" | "refusal";
}[] = [
  { name: "the same info", history: [registered()], report: info, unchanged: true, decides: "nothing" },
  {
    name: "the same content, keys and labels in another order",
    history: [registered()],
    report: reordered,
    unchanged: true,
    decides: "nothing",
  },
  {
    name: "the same engines in another order (a set)",
    history: [registered(withEngines)],
    report: engines(["wasm", "docker"]),
    unchanged: true,
    decides: "nothing",
  },
  {
    name: "the same info while PENDING",
    history: [registered(info, "PENDING")],
    report: info,
    unchanged: true,
    decides: "nothing",
  },
  {
    name: "the same info while UNHEALTHY (health does not matter)",
    history: [registered(), unhealthy],
    report: info,
    unchanged: true,
    decides: "nothing",
  },
  {
    name: "the info it was updated to",
    history: [registered(), infoUpdated(relabelled)],
    report: relabelled,
    unchanged: true,
    decides: "nothing",
  },
  {
    name: "the info it had before an update",
    history: [registered(), infoUpdated(relabelled)],
    report: info,
    unchanged: false,
    decides: "events",
  },
  { name: "a changed label", history: [registered()], report: relabelled, unchanged: false, decides: "events" },
  { name: "an engine more", history: [registered()], report: withEngines, unchanged: false, decides: "events" },
  {
    name: "a field left out",
    history: [registered()],
    report: { ...info, BacalhauVersion: undefined } as unknown as NodeInfo,
    unchanged: false,
    decides: "events",
  },
  {
    name: "a rejected node's unchanged info (the decider refuses it)",
    history: [registered(), rejected],
    report: info,
    unchanged: false,
    decides: "refusal",
  },
  {
    name: "a deleted node's unchanged info (the decider refuses it)",
    history: [registered(), deleted],
    report: info,
    unchanged: false,
    decides: "refusal",
  },
  {
    name: "the orchestrator's own node (not a compute node: its actor decides)",
    history: [registered(requester)],
    report: requester,
    unchanged: false,
    decides: "nothing",
  },
  {
    name: "a compute report for the orchestrator's node",
    history: [registered(requester)],
    report: info,
    unchanged: false,
    decides: "refusal",
  },
  { name: "no node at all", history: [], report: info, unchanged: false, decides: "refusal" },
];

describe("an unchanged info report answered from what the node manager knows", () => {
  for (const c of cases) {
    it(`${c.unchanged ? "answers" : "leaves to the actor"}: ${c.name}`, () => {
      const spec = given(c.history);
      expect(knownUnchanged(knownNode(spec.state), c.report)).toBe(c.unchanged);
      // Whenever it answers, the decider, given the same history, decides exactly that: nothing stored, nothing
      // refused.
      const then = spec.when({ type: "UpdateInfo", info: c.report });
      if (c.decides === "nothing") then.thenNothingHappened();
      else if (c.decides === "events")
        expect(then.decision).toMatchObject({ ok: true, events: [{ type: "NodeInfoUpdated" }] });
      else expect(then.decision.ok).toBe(false);
    });
  }

  it("never answers where the decider would store or refuse, over many random reports", () => {
    let seed = 7;
    const pick = <T>(xs: readonly T[]): T => xs[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % xs.length] as T;
    const infos = [info, relabelled, reordered, withEngines, engines(["wasm", "docker"]), requester, computeInfo(ID)];
    const histories = [
      [registered()],
      [registered(withEngines)],
      [registered(), rejected],
      [registered(), deleted],
      [registered(relabelled, "PENDING")],
      [registered(), unhealthy, infoUpdated(withEngines)],
      [registered(requester)],
    ];
    for (let i = 0; i < 500; i++) {
      const spec = given(pick(histories));
      const report = pick(infos);
      const decision = spec.when({ type: "UpdateInfo", info: report }).decision;
      const decidedNothing = decision.ok && decision.events.length === 0;
      if (knownUnchanged(knownNode(spec.state), report)) expect(decidedNothing).toBe(true);
      // A compute node's unchanged report is always recognised: the fast path is not merely safe but taken.
      if (decidedNothing && spec.state.nodeType === "Compute" && report.NodeType === "Compute")
        expect(knownUnchanged(knownNode(spec.state), report)).toBe(true);
    }
  });

  it("prints equal content equally and changed content differently", () => {
    expect(infoPrint(reordered)).toEqual(infoPrint(info));
    expect(infoPrint(relabelled)).not.toEqual(infoPrint(info));
  });
});
