import { describe, expect, it } from "vitest";
import { LivenessTracker } from "../../../src/actors/liveness-tracker.ts";

const node = {
  health: "HEALTHY" as const,
  disconnectMs: 60_000,
  unknownMs: 300_000,
  rejected: false,
  lastHeartbeat: null,
};

describe("LivenessTracker", () => {
  it("counts a healthy node's silence from its last heartbeat, or from when tracking began", () => {
    const t = new LivenessTracker();
    const slot = t.track("a", 1000, node);
    expect(t.lastHeartbeat(slot)).toBeNull();
    expect(t.deadline(slot)).toBe(61_000);
    t.beat(slot, 5000);
    expect(t.lastHeartbeat(slot)).toBe(5000);
    expect(t.deadline(slot)).toBe(65_000);
  });

  it("gives UNHEALTHY nodes UnknownTimeout from their last heartbeat, and UNKNOWN nodes no deadline", () => {
    const t = new LivenessTracker();
    const slot = t.track("a", 1000, { ...node, lastHeartbeat: 2000 });
    t.update(slot, { ...node, health: "UNHEALTHY" }, 62_000);
    expect(t.deadline(slot)).toBe(302_000);
    t.update(slot, { ...node, health: "UNKNOWN" }, 302_000);
    expect(t.deadline(slot)).toBeUndefined();
  });

  it("does not count silence before the floor: a full DisconnectTimeout after it for everyone", () => {
    const t = new LivenessTracker();
    const healthy = t.track("h", 0, { ...node, lastHeartbeat: 0 });
    const unhealthy = t.track("u", 0, { ...node, lastHeartbeat: 0, health: "UNHEALTHY" });
    t.forgiveSilenceBefore(100_000);
    expect(t.deadline(healthy)).toBe(160_000);
    // Already UNHEALTHY at the floor: its silence stands, but not sooner than a DisconnectTimeout.
    expect(t.deadline(unhealthy)).toBe(300_000);
    t.forgiveSilenceBefore(280_000);
    expect(t.deadline(unhealthy)).toBe(340_000);
    // Healthy at the floor, UNHEALTHY since: UnknownTimeout counts from the floor.
    t.update(healthy, { ...node, health: "UNHEALTHY" }, 340_000);
    expect(t.deadline(healthy)).toBe(580_000);
  });

  it("counts silence from a floor ahead of now (a reconnect grace), and a heartbeat after it from itself", () => {
    const t = new LivenessTracker();
    const slot = t.track("a", 0, { ...node, lastHeartbeat: 0 });
    t.forgiveSilenceBefore(10_000 + 4_000);
    expect(t.silenceCountsFrom).toBe(14_000);
    expect(t.deadline(slot)).toBe(74_000);
    t.beat(slot, 12_000);
    expect(t.deadline(slot)).toBe(74_000);
    t.beat(slot, 20_000);
    expect(t.deadline(slot)).toBe(80_000);
  });

  it("counts the connected fleet: HEALTHY and not rejected, through every change and a forgotten node", () => {
    const t = new LivenessTracker();
    const a = t.track("a", 0, node);
    t.track("b", 0, node);
    const c = t.track("c", 0, { ...node, health: "UNHEALTHY" });
    t.track("d", 0, { ...node, rejected: true });
    expect(t.connectedCount).toBe(2);
    t.update(a, { ...node, health: "UNHEALTHY" }, 1);
    t.update(c, node, 1);
    expect(t.connectedCount).toBe(2);
    t.update(c, { ...node, rejected: true }, 2);
    expect(t.connectedCount).toBe(1);
    t.forget("b");
    t.forget("a");
    expect(t.connectedCount).toBe(0);
    // A reused slot starts uncounted, whatever its last owner was.
    t.track("e", 3, { ...node, health: "UNKNOWN" });
    expect(t.connectedCount).toBe(0);
    t.track("e", 3, node);
    expect(t.connectedCount).toBe(1);
  });

  it("reuses the slots of forgotten nodes and grows past its first capacity", () => {
    const t = new LivenessTracker();
    for (let i = 0; i < 5000; i++) t.track(`n${i}`, i, { ...node, lastHeartbeat: i });
    expect(t.size).toBe(5000);
    expect(t.lastHeartbeat(t.slotOf("n4999"))).toBe(4999);
    const slot = t.slotOf("n7");
    t.setResources(slot, {
      AvailableCapacity: { CPU: 1 },
      QueueUsedCapacity: {},
      RunningExecutions: 0,
      EnqueuedExecutions: 0,
    });
    t.forget("n7");
    expect(t.slotOf("n7")).toBe(-1);
    const again = t.track("fresh", 0, node);
    expect(again).toBe(slot);
    expect(t.resources(again)).toBeUndefined();
    expect(t.idOf(again)).toBe("fresh");
  });

  it("keeps the rejected and changing flags apart", () => {
    const t = new LivenessTracker();
    const slot = t.track("a", 0, { ...node, rejected: true });
    t.setChanging(slot, true);
    expect([t.isRejected(slot), t.isChanging(slot)]).toEqual([true, true]);
    t.update(slot, { ...node, rejected: false }, 1);
    expect([t.isRejected(slot), t.isChanging(slot)]).toEqual([false, true]);
    t.setChanging(slot, false);
    expect([t.isRejected(slot), t.isChanging(slot)]).toEqual([false, false]);
  });

  it("gives back each node's last resource report as reported, fields left out included, in its own slot", () => {
    const t = new LivenessTracker();
    const a = t.track("a", 0, node);
    const b = t.track("b", 0, node);
    expect(t.resources(a)).toBeUndefined();
    const full = {
      AvailableCapacity: { CPU: 3.5, Memory: 7 * 1024 ** 3, Disk: 2 ** 40, GPU: 1 },
      QueueUsedCapacity: { CPU: 0.5, Memory: 0, Disk: 0, GPU: 0 },
      RunningExecutions: 2,
      EnqueuedExecutions: 9,
    };
    const partial = {
      AvailableCapacity: { Memory: 1024 },
      QueueUsedCapacity: {},
      RunningExecutions: 0,
      EnqueuedExecutions: 0,
    };
    t.setResources(a, full);
    t.setResources(b, partial);
    expect(t.resources(a)).toEqual(full);
    expect(t.resources(b)).toStrictEqual(partial);
    t.setResources(a, partial);
    expect(t.resources(a)).toStrictEqual(partial);
    expect(t.resources(b)).toStrictEqual(partial);
  });

  it("names each report with a version of its own: 0 before any, new on every report (an equal one too), never another slot's, 0 again for a reused slot", () => {
    const t = new LivenessTracker();
    const a = t.track("a", 0, node);
    const b = t.track("b", 0, node);
    expect([t.reportVersion(a), t.reportVersion(b)]).toEqual([0, 0]);
    const report = {
      AvailableCapacity: { CPU: 1 },
      QueueUsedCapacity: {},
      RunningExecutions: 0,
      EnqueuedExecutions: 0,
    };
    t.setResources(a, report);
    const first = t.reportVersion(a);
    expect(first).toBeGreaterThan(0);
    expect(t.reportVersion(a)).toBe(first);
    t.setResources(b, report);
    t.setResources(a, report);
    const seen = [first, t.reportVersion(b), t.reportVersion(a)];
    expect(new Set(seen).size).toBe(3);
    t.forget("a");
    expect(t.reportVersion(t.track("c", 0, node))).toBe(0);
  });

  it("keeps a node's info print until it is forgotten, apart from its other flags", () => {
    const t = new LivenessTracker();
    const slot = t.track("a", 0, { ...node, rejected: true });
    expect(t.infoPrint(slot)).toBeUndefined();
    t.setInfoPrint(slot, { hi: 0xffffffff, lo: 7 });
    t.setChanging(slot, true);
    expect(t.infoPrint(slot)).toEqual({ hi: 0xffffffff, lo: 7 });
    expect([t.isRejected(slot), t.isChanging(slot)]).toEqual([true, true]);
    t.setInfoPrint(slot, undefined);
    expect(t.infoPrint(slot)).toBeUndefined();
    t.setInfoPrint(slot, { hi: 1, lo: 2 });
    t.forget("a");
    expect(t.infoPrint(t.track("b", 0, node))).toBeUndefined();
  });
});
