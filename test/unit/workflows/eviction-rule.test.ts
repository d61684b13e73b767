import { describe, expect, it } from "vitest";
import {
  FULL_BUCKET,
  disruptionOf,
  evictionRateOf,
  evictionStep,
  type EvictionPolicy,
} from "../../../machines/reactions/eviction-rule.ts";

/** Kubernetes' defaults: 0.1 nodes/s, 0.01 nodes/s, 0.55, 50 nodes. */
const K8S: EvictionPolicy = { rate: 0.1, secondaryRate: 0.01, unhealthyThreshold: 0.55, largeClusterSize: 50 };
const NOW = 1_000_000;

describe("the fleet's disruption, as Kubernetes' ComputeZoneState", () => {
  it.each([
    // nodes, unhealthy, transport down, grace until → disruption, rate
    [10, 0, false, undefined, "normal", 0.1],
    [10, 1, false, undefined, "normal", 0.1],
    // Two unhealthy are never "partial", whatever the share (Kubernetes: more than two).
    [3, 2, false, undefined, "normal", 0.1],
    [10, 5, false, undefined, "normal", 0.1],
    [10, 6, false, undefined, "partial", 0],
    [100, 55, false, undefined, "partial", 0.01],
    [100, 54, false, undefined, "normal", 0.1],
    [51, 40, false, undefined, "partial", 0.01],
    [50, 40, false, undefined, "partial", 0],
    // Nobody healthy: taken for the orchestrator's own fault.
    [1, 1, false, undefined, "full", 0],
    [1000, 1000, false, undefined, "full", 0],
    [10, 1, true, undefined, "own-transport", 0],
    [10, 1, false, NOW + 1, "grace", 0],
    [10, 1, false, NOW, "normal", 0.1],
    [0, 0, false, undefined, "normal", 0.1],
  ] as const)(
    "%i nodes, %i unhealthy, transport down %s, grace until %s → %s at %f/s",
    (nodes, unhealthy, transportDown, graceUntil, disruption, rate) => {
      const fleet = { nodes, unhealthy };
      const own = { now: NOW, transportDown, ...(graceUntil === undefined ? {} : { graceUntil }) };
      expect(disruptionOf(fleet, K8S, own)).toBe(disruption);
      expect(evictionRateOf(disruptionOf(fleet, K8S, own), fleet, K8S)).toBe(rate);
    },
  );
});

describe("which silent nodes' work moves now", () => {
  const healthy = { nodes: 100, unhealthy: 3 };

  it("one at once after a quiet spell, then one per 1/rate seconds, first come first", () => {
    const first = evictionStep(["a", "b", "c"], healthy, K8S, FULL_BUCKET(NOW - 60_000), { now: NOW });
    expect(first).toMatchObject({ release: ["a"], waiting: ["b", "c"], disruption: "normal", nextInMs: 10_000 });
    const early = evictionStep(first.waiting, healthy, K8S, first.bucket, { now: NOW + 9_999 });
    expect(early).toMatchObject({ release: [], waiting: ["b", "c"], nextInMs: 1 });
    const second = evictionStep(early.waiting, healthy, K8S, early.bucket, { now: NOW + 10_000 });
    expect(second).toMatchObject({ release: ["b"], waiting: ["c"], nextInMs: 10_000 });
    // A long wait still holds one token only (burst 1): no storm after a pause.
    const later = evictionStep(["c", "d", "e"], healthy, K8S, second.bucket, { now: NOW + 1_000_000 });
    expect(later).toMatchObject({ release: ["c"], waiting: ["d", "e"], nextInMs: 10_000 });
  });

  it("at the secondary rate once the threshold share is silent in a large fleet", () => {
    const step = evictionStep(["a", "b"], { nodes: 100, unhealthy: 60 }, K8S, FULL_BUCKET(NOW), { now: NOW });
    expect(step).toMatchObject({
      release: ["a"],
      waiting: ["b"],
      disruption: "partial",
      rate: 0.01,
      nextInMs: 100_000,
    });
  });

  it.each([
    ["a small fleet mostly silent", { nodes: 10, unhealthy: 6 }, {}, "partial"],
    ["every node silent", { nodes: 200, unhealthy: 200 }, {}, "full"],
    ["the orchestrator's own transport down", healthy, { transportDown: true }, "own-transport"],
  ] as const)("nothing while paused: %s", (_what, fleet, own, disruption) => {
    const step = evictionStep(["a", "b"], fleet, K8S, FULL_BUCKET(NOW), { now: NOW, ...own });
    expect(step).toMatchObject({ release: [], waiting: ["a", "b"], disruption, rate: 0, nextInMs: undefined });
    // A pause does not save up tokens: once it ends, one goes, then the rate.
    const after = evictionStep(step.waiting, healthy, K8S, step.bucket, { now: NOW + 3_600_000 });
    expect(after.release).toEqual(["a"]);
  });

  it("nothing during the grace after a start, then the next at its end", () => {
    const step = evictionStep(["a"], healthy, K8S, FULL_BUCKET(NOW), { now: NOW, graceUntil: NOW + 60_000 });
    expect(step).toMatchObject({ release: [], disruption: "grace", nextInMs: 60_000 });
    expect(
      evictionStep(["a"], healthy, K8S, step.bucket, { now: NOW + 60_000, graceUntil: NOW + 60_000 }).release,
    ).toEqual(["a"]);
  });

  it("with nothing waiting, nothing to wait for", () => {
    expect(evictionStep([], healthy, K8S, FULL_BUCKET(NOW), { now: NOW })).toMatchObject({
      release: [],
      nextInMs: undefined,
    });
  });

  it("a rate above one node a second moves as many as have come due", () => {
    const fast = { ...K8S, rate: 4 };
    const first = evictionStep(["a", "b", "c", "d", "e"], healthy, fast, FULL_BUCKET(NOW), { now: NOW });
    expect(first.release).toEqual(["a"]);
    expect(first.nextInMs).toBe(250);
    const second = evictionStep(first.waiting, healthy, fast, first.bucket, { now: NOW + 250 });
    expect(second.release).toEqual(["b"]);
  });
});
