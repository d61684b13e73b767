import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coalescedRefresh } from "../../../ui/src/live/coalesced-refresh.ts";

const PACING = { delayMs: 200, intervalMs: 1000 };

describe("coalescedRefresh: one read for a burst of events", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reads once, after the delay, for requests that arrive together", async () => {
    const refresh = vi.fn();
    const coalesced = coalescedRefresh(refresh, PACING);
    for (let i = 0; i < 500; i++) coalesced.request();
    await vi.advanceTimersByTimeAsync(199);
    expect(refresh).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it("reads at most once an interval while requests keep coming, and once more after the last", async () => {
    const refresh = vi.fn();
    const coalesced = coalescedRefresh(refresh, PACING);
    // 10,000 events over 5 s: one every half millisecond.
    for (let i = 0; i < 10_000; i++) {
      coalesced.request();
      if (i % 2 === 1) await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(2_000);
    expect(refresh.mock.calls.length).toBeGreaterThanOrEqual(5);
    expect(refresh.mock.calls.length).toBeLessThanOrEqual(7);
  });

  it("never starts a read while the previous one is under way, and serves what was asked meanwhile after it", async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const coalesced = coalescedRefresh(async () => {
      calls++;
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      running--;
    }, PACING);
    coalesced.request();
    await vi.advanceTimersByTimeAsync(500);
    coalesced.request();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(2);
    expect(most).toBe(1);
  });

  it("reads nothing once stopped", async () => {
    const refresh = vi.fn();
    const coalesced = coalescedRefresh(refresh, PACING);
    coalesced.request();
    coalesced.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(refresh).not.toHaveBeenCalled();
  });
});
