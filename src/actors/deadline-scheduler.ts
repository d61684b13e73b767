import type { Clock, TimerHandle } from "./clock.ts";

/** How many due deadlines fire in one turn of the event loop before it yields to I/O. */
const FIRE_BUDGET = 2000;

/**
 * Every deadline of the orchestrator in one binary heap with one timer, armed for the earliest:
 * 100,000 nodes' health deadlines cost 100,000 small heap entries, not 100,000 timers. Keys are
 * unique; setting a key again moves its deadline. Due deadlines fire in batches that yield to
 * the event loop between them, so a wave of them never starves heartbeats or HTTP.
 */
export class DeadlineScheduler {
  private keys: string[] = [];
  private ats: number[] = [];
  private readonly index = new Map<string, number>();
  private readonly handlers = new Map<string, (key: string) => void>();
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private stopped = false;
  private firing = false;

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.keys.length;
  }

  /** Arms (or moves) `key` to fire at `at`, calling `fire(key)` then. */
  set(key: string, at: number, fire: (key: string) => void): void {
    this.handlers.set(key, fire);
    const i = this.index.get(key);
    if (i === undefined) {
      this.keys.push(key);
      this.ats.push(at);
      this.index.set(key, this.keys.length - 1);
      this.up(this.keys.length - 1);
    } else {
      const before = this.ats[i] as number;
      this.ats[i] = at;
      if (at < before) this.up(i);
      else this.down(i);
    }
    this.rearm();
  }

  cancel(key: string): void {
    const i = this.index.get(key);
    if (i === undefined) return;
    this.removeAt(i);
    this.handlers.delete(key);
    this.rearm();
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  at(key: string): number | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.ats[i];
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private rearm(): void {
    if (this.stopped || this.firing) return;
    const next = this.ats[0];
    if (next === undefined) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Infinity;
      return;
    }
    if (this.timer && this.timerAt === next) return;
    this.timer?.cancel();
    this.timerAt = next;
    this.timer = this.clock.setTimer(next - this.clock.now(), () => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.fireDue();
    });
  }

  private fireDue(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    this.firing = true;
    let fired = 0;
    try {
      while (fired < FIRE_BUDGET && this.keys.length > 0 && (this.ats[0] as number) <= now) {
        const key = this.keys[0] as string;
        const fire = this.handlers.get(key);
        this.removeAt(0);
        this.handlers.delete(key);
        fired++;
        fire?.(key);
      }
    } finally {
      this.firing = false;
    }
    if (fired === FIRE_BUDGET && this.keys.length > 0 && (this.ats[0] as number) <= now) {
      // More are due: let I/O (heartbeats that would cancel them) run first, then carry on.
      setImmediate(() => this.fireDue());
      return;
    }
    this.rearm();
  }

  private removeAt(i: number): void {
    const last = this.keys.length - 1;
    const key = this.keys[i] as string;
    this.index.delete(key);
    if (i !== last) {
      this.keys[i] = this.keys[last] as string;
      this.ats[i] = this.ats[last] as number;
      this.index.set(this.keys[i] as string, i);
    }
    this.keys.pop();
    this.ats.pop();
    if (i < this.keys.length) {
      this.down(i);
      this.up(i);
    }
  }

  private swap(a: number, b: number): void {
    const k = this.keys[a] as string;
    const t = this.ats[a] as number;
    this.keys[a] = this.keys[b] as string;
    this.ats[a] = this.ats[b] as number;
    this.keys[b] = k;
    this.ats[b] = t;
    this.index.set(this.keys[a] as string, a);
    this.index.set(k, b);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.ats[parent] as number) <= (this.ats[i] as number)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && (this.ats[l] as number) < (this.ats[smallest] as number)) smallest = l;
      if (r < n && (this.ats[r] as number) < (this.ats[smallest] as number)) smallest = r;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
