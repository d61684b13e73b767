import { describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";
import { ManualClock, settle } from "../../support/manual-clock.ts";

describe("DeadlineScheduler", () => {
  it("fires each key once at its deadline, in deadline order, with one timer for all of them", async () => {
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock);
    const fired: [string, number][] = [];
    const fire = (key: string) => fired.push([key, clock.now() - t0]);
    const t0 = clock.now();
    for (const [key, at] of [
      ["c", 300],
      ["a", 100],
      ["b", 200],
      ["d", 200],
    ] as const)
      scheduler.set(key, t0 + at, fire);
    expect(scheduler.size).toBe(4);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(1000);
    expect(fired.map(([k]) => k).slice(0, 1)).toEqual(["a"]);
    expect(fired.map(([, at]) => at)).toEqual([100, 200, 200, 300]);
    expect(new Set(fired.map(([k]) => k))).toEqual(new Set(["a", "b", "c", "d"]));
    expect(scheduler.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it("moves a key when it is set again, and forgets a cancelled one", async () => {
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock);
    const fired: string[] = [];
    const t0 = clock.now();
    scheduler.set("x", t0 + 100, (k) => fired.push(k));
    scheduler.set("y", t0 + 150, (k) => fired.push(k));
    scheduler.set("x", t0 + 500, (k) => fired.push(`${k}-moved`));
    scheduler.cancel("y");
    await clock.advance(499);
    expect(fired).toEqual([]);
    expect(scheduler.at("x")).toBe(t0 + 500);
    await clock.advance(1);
    expect(fired).toEqual(["x-moved"]);
    expect(scheduler.has("x")).toBe(false);
  });

  it("keeps heap order through thousands of random sets, moves and cancels", async () => {
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock);
    const t0 = clock.now();
    const expected = new Map<string, number>();
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const fired: [string, number][] = [];
    for (let i = 0; i < 5000; i++) {
      const key = `k${Math.floor(random() * 1000)}`;
      if (random() < 0.2) {
        scheduler.cancel(key);
        expected.delete(key);
      } else {
        const at = t0 + 1 + Math.floor(random() * 10_000);
        scheduler.set(key, at, (k) => fired.push([k, clock.now()]));
        expected.set(key, at);
      }
    }
    expect(scheduler.size).toBe(expected.size);
    await clock.advance(20_000);
    expect(fired).toHaveLength(expected.size);
    for (const [key, at] of fired) expect(at).toBe(expected.get(key));
    const times = fired.map(([, at]) => at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("fires a wave of due deadlines in batches that let the event loop run between them", async () => {
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock);
    const t0 = clock.now();
    let fired = 0;
    let immediatesBetween = 0;
    let sawYield = false;
    for (let i = 0; i < 10_000; i++) scheduler.set(`n${i}`, t0 + 10, () => fired++);
    const probe = () => {
      immediatesBetween++;
      if (fired > 0 && fired < 10_000) sawYield = true;
      if (fired < 10_000) setImmediate(probe);
    };
    setImmediate(probe);
    await clock.advance(10);
    expect(fired).toBe(10_000);
    expect(sawYield).toBe(true);
    expect(immediatesBetween).toBeGreaterThan(1);
  });

  it("keeps kinds of deadlines apart: the same id in two kinds and as a plain key are three deadlines, each firing its own handler", async () => {
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock);
    const t0 = clock.now();
    const fired: string[] = [];
    const health = scheduler.kind((id) => fired.push(`health ${id}`));
    const other = scheduler.kind((id) => fired.push(`other ${id}`));
    health.set("n1", t0 + 300);
    other.set("n1", t0 + 100);
    scheduler.set("n1", t0 + 200, (key) => fired.push(`plain ${key}`));
    health.set("n2", t0 + 50);
    health.set("n2", t0 + 400); // moved
    other.set("n2", t0 + 150);
    other.cancel("n2");
    expect(scheduler.size).toBe(4);
    expect([health.at("n1"), other.at("n1"), scheduler.at("n1"), health.at("n2"), other.has("n2")]).toEqual([
      t0 + 300,
      t0 + 100,
      t0 + 200,
      t0 + 400,
      false,
    ]);
    await clock.advance(1000);
    expect(fired).toEqual(["other n1", "plain n1", "health n1", "health n2"]);
    expect(scheduler.size).toBe(0);
    expect(health.has("n1")).toBe(false);
  });

  it("keeps heap order across kinds through random sets, moves and cancels", async () => {
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock);
    const t0 = clock.now();
    const fired: [string, number][] = [];
    const kinds = [0, 1, 2].map((k) => scheduler.kind((id) => fired.push([`${k}/${id}`, clock.now() - t0])));
    const expected = new Map<string, number>();
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 3000; i++) {
      const k = Math.floor(random() * 3);
      const id = `n${Math.floor(random() * 500)}`;
      if (random() < 0.2) {
        kinds[k]!.cancel(id);
        expected.delete(`${k}/${id}`);
      } else {
        const at = 1 + Math.floor(random() * 10_000);
        kinds[k]!.set(id, t0 + at);
        expected.set(`${k}/${id}`, at);
      }
    }
    expect(scheduler.size).toBe(expected.size);
    await clock.advance(20_000);
    expect(new Map(fired)).toEqual(expected);
    const times = fired.map(([, at]) => at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
  it("runs periodic work every period of the clock, never two runs at once, until cancelled", async () => {
    const clock = new ManualClock(0);
    const deadlines = new DeadlineScheduler(clock);
    const starts: number[] = [];
    let finish: (() => void) | undefined;
    const cancel = deadlines.every("sweep", 1000, () => {
      starts.push(clock.now());
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await clock.advance(999);
    expect(starts).toEqual([]);
    await clock.advance(1);
    expect(starts).toEqual([1000]);
    // The run takes 2.5 periods: no second one meanwhile; the next period counts from its end.
    await clock.advance(2500);
    expect(starts).toEqual([1000]);
    finish!();
    await settle();
    await clock.advance(999);
    expect(starts).toEqual([1000]);
    await clock.advance(1);
    expect(starts).toEqual([1000, 4500]);
    finish!();
    // A run that fails does not end the series.
    const failing = deadlines.every("probe", 100, () => {
      starts.push(-clock.now());
      throw new Error("probe failed");
    });
    await clock.advance(250);
    expect(starts.filter((t) => t < 0)).toEqual([-4600, -4700]);
    cancel();
    failing();
    await clock.advance(10_000);
    expect(starts).toEqual([1000, 4500, -4600, -4700]);
    expect(deadlines.size).toBe(0);
  });

  it("sleeps on the clock under a key, wakes early when its signal aborts, and refuses a key already armed", async () => {
    const clock = new ManualClock(0);
    const deadlines = new DeadlineScheduler(clock);
    const woke: string[] = [];
    void deadlines.sleep("retry", 500).then(() => woke.push(`retry at ${clock.now()}`));
    expect(deadlines.at("retry")).toBe(500);
    await expect(deadlines.sleep("retry", 10)).rejects.toThrow("deadline retry is already armed");
    const stopping = new AbortController();
    void deadlines.sleep("pause", 60_000, stopping.signal).then(() => woke.push(`pause at ${clock.now()}`));
    await clock.advance(499);
    expect(woke).toEqual([]);
    await clock.advance(1);
    expect(woke).toEqual(["retry at 500"]);
    stopping.abort();
    await settle();
    expect(woke).toEqual(["retry at 500", "pause at 500"]);
    // Cut short, it leaves nothing armed; a signal aborted before the sleep wakes it at once.
    expect(deadlines.size).toBe(0);
    await deadlines.sleep("pause", 60_000, stopping.signal);
    expect(deadlines.size).toBe(0);
    // A stopped scheduler fires nothing: only its signal ends a sleep.
    deadlines.stop();
    let late = false;
    void deadlines.sleep("after-stop", 10).then(() => (late = true));
    await clock.advance(1_000);
    expect(late).toBe(false);
  });

  it("tells how late each deadline fired: from its instant, or from its timer's arming if later", async () => {
    // Its timers come 30 ms late, as on a stalled event loop.
    class LateClock extends ManualClock {
      override setTimer(delayMs: number, fn: () => void) {
        return super.setTimer(Math.max(0, delayMs) + 30, fn);
      }
    }
    const clock = new LateClock();
    const late: number[] = [];
    const scheduler = new DeadlineScheduler(clock, (ms) => late.push(ms));
    const t0 = clock.now();
    scheduler.set("on-time", t0 + 100, () => {});
    scheduler.set("with-it", t0 + 100, () => {});
    await clock.advance(1000);
    // One firing for the two, told once.
    expect(late).toEqual([30]);
    // Due 10 minutes ago (recovered at start): late only by the timer's own delay, not by the 10 minutes.
    scheduler.set("recovered", clock.now() - 600_000, () => {});
    await clock.advance(1000);
    expect(late).toEqual([30, 30]);
  });
});
