import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { systemClock, type Clock } from "../../../src/actors/clock.ts";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";

describe("the system clock", () => {
  it("waits for a deadline a month off (a job's TotalTimeout) instead of firing at once, again and again", async () => {
    let armed = 0;
    // The real clock, counting the timers it is asked for.
    const clock: Clock = { now: systemClock.now, setTimer: (ms, fn) => (armed++, systemClock.setTimer(ms, fn)) };
    const scheduler = new DeadlineScheduler(clock);
    const fired: string[] = [];
    scheduler.set("job-timeout", clock.now() + 30 * 24 * 3600 * 1000, (key) => fired.push(key));
    await sleep(100);
    expect(fired).toEqual([]);
    expect(armed).toBe(1);
    scheduler.stop();
  });
});
