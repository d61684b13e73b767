import { describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";
import { StallWatch } from "../../../src/actors/stall-watch.ts";
import { ManualClock } from "../../support/manual-clock.ts";

describe("StallWatch", () => {
  it("ticks as a deadline of the one heap, reports a gap of its threshold once, and stop ends the ticks", async () => {
    const clock = new ManualClock(0);
    const deadlines = new DeadlineScheduler(clock);
    const stalls: [number, number][] = [];
    const watch = new StallWatch(clock, deadlines, {
      thresholdMs: 1_000,
      tickMs: 100,
      onStall: (from, to) => stalls.push([from, to]),
    });
    watch.start();
    expect(deadlines.at("stall-watch")).toBe(100);
    expect(clock.pendingTimers).toBe(1);
    // Ticking on time: no stall, however long it runs.
    await clock.advance(5_000);
    expect(stalls).toEqual([]);
    expect(deadlines.at("stall-watch")).toBe(5_100);
    // Nothing looked for 1.5 s (no tick ran): the next look sees the gap, once.
    deadlines.stop();
    await clock.advance(1_500);
    expect(watch.check()).toBe(true);
    expect(watch.check()).toBe(false);
    expect(stalls).toEqual([[5_000, 6_500]]);
    watch.stop();
    expect(deadlines.has("stall-watch")).toBe(false);
  });
});
