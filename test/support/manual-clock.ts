import type { Clock, TimerHandle } from "../../src/actors/clock.ts";
import { writerThreadsBusy, writerThreadsIdle } from "../../src/events/sqlite/sqlite-writer-thread.ts";

/** The one fake in the suite: time moves only when a test says so. */
export class ManualClock implements Clock {
  private current: number;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 0;

  constructor(start = Date.parse("2026-01-01T00:00:00Z")) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    this.timers.push({ at: this.current + Math.max(0, delayMs), fn, id });
    return { cancel: () => (this.timers = this.timers.filter((t) => t.id !== id)) };
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward in steps until `work` settles (a command waiting out its retry pauses on
   * this clock), and returns its outcome. How much time passed is `now()` before and after.
   */
  async drive<T>(work: Promise<T>, stepMs = 50, maxSteps = 10_000): Promise<T> {
    let settled = false;
    work.then(
      () => (settled = true),
      () => (settled = true),
    );
    await settle();
    for (let i = 0; i < maxSteps && !settled; i++) await this.advance(stepMs);
    return work;
  }

  /** Moves time forward, firing due timers in order and letting their async work settle. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t.id !== due.id);
      this.current = Math.max(this.current, due.at);
      due.fn();
      await settle();
    }
    this.current = target;
    await settle();
  }
}

/**
 * Lets pending promise chains (store appends, mailboxes) run: `rounds` turns of the event loop
 * in which no SQLite writer thread had a commit under way (a commit there takes real time).
 */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise((r) => setImmediate(r));
    if (writerThreadsBusy()) {
      await writerThreadsIdle();
      i = -1;
    }
  }
}
