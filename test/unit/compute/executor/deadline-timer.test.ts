import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deadlineTimer } from "../../../../src/compute/executor/deadline-timer.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

describe("a deadline timer", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("given a deadline thirty days off (past Node's longest delay), fires at it and not before", () => {
    const fire = vi.fn();
    deadlineTimer(30 * DAY_MS, fire);
    vi.advanceTimersByTime(1_000);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY_MS - 1_001);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it("given a near or past deadline, fires once at it; cancelled, never", () => {
    const near = vi.fn();
    const past = vi.fn();
    const cancelled = vi.fn();
    deadlineTimer(500, near);
    deadlineTimer(-10, past);
    deadlineTimer(40 * DAY_MS, cancelled).cancel();
    vi.advanceTimersByTime(499);
    expect(near).not.toHaveBeenCalled();
    expect(past).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(41 * DAY_MS);
    expect(near).toHaveBeenCalledTimes(1);
    expect(cancelled).not.toHaveBeenCalled();
  });
});
