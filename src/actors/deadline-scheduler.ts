import type { Clock, TimerHandle } from "./clock.ts";

/** How many due deadlines fire in one turn of the event loop before it yields to I/O. */
const FIRE_BUDGET = 2000;
/** The kind of deadlines set with a handler of their own (`set(key, at, fire)`). */
const GENERIC = 0;

/**
 * Deadlines of one kind, keyed by an id that already exists (a node's one id string), with one
 * handler for all of them: an entry costs a heap slot and a map slot, not a key string of its
 * own and a handler entry (100,000 nodes' health deadlines).
 */
export interface DeadlineKind {
  /** Arms (or moves) `id`'s deadline of this kind to fire at `at`. */
  set(id: string, at: number): void;
  cancel(id: string): void;
  has(id: string): boolean;
  at(id: string): number | undefined;
}

interface Kind {
  /** Where each id of this kind sits in the heap. */
  readonly index: Map<string, number>;
  readonly fire: ((id: string) => void) | undefined;
}

/**
 * Every deadline of the orchestrator in one binary heap with one timer, armed for the earliest:
 * 100,000 nodes' health deadlines cost 100,000 small heap entries, not 100,000 timers. Keys are
 * unique within their kind; setting a key again moves its deadline. Due deadlines fire in
 * batches that yield to the event loop between them, so a wave of them never starves heartbeats
 * or HTTP.
 */
export class DeadlineScheduler {
  private keys: string[] = [];
  private kindOf: number[] = [];
  private ats: number[] = [];
  private readonly kinds: Kind[] = [{ index: new Map(), fire: undefined }];
  /** The generic kind's handlers, one per key. */
  private readonly handlers = new Map<string, (key: string) => void>();
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  /** When the timer was armed: a deadline whose instant had passed by then is late only from that moment. */
  private armedAt = 0;
  private stopped = false;
  private firing = false;

  /**
   * `lateness`: told, each time due deadlines fire, how many milliseconds after it could have fired the most overdue of
   * them did.
   */
  constructor(
    private readonly clock: Clock,
    private readonly lateness?: (ms: number) => void,
  ) {}

  get size(): number {
    return this.keys.length;
  }

  /** A kind of deadline whose every entry fires `fire(id)`. */
  kind(fire: (id: string) => void): DeadlineKind {
    const k = this.kinds.length;
    this.kinds.push({ index: new Map(), fire });
    return {
      set: (id, at) => this.place(k, id, at),
      cancel: (id) => this.remove(k, id),
      has: (id) => (this.kinds[k] as Kind).index.has(id),
      at: (id) => this.atOf(k, id),
    };
  }

  /** Arms (or moves) `key` to fire at `at`, calling `fire(key)` then. */
  set(key: string, at: number, fire: (key: string) => void): void {
    this.handlers.set(key, fire);
    this.place(GENERIC, key, at);
  }

  cancel(key: string): void {
    if (this.remove(GENERIC, key)) this.handlers.delete(key);
  }

  /**
   * Runs `run` every `periodMs` of the clock, the next period counted from the end of the run
   * before it (runs never overlap), until the returned cancel or stop(). A run that throws or
   * rejects is the caller's to log: the next one comes all the same.
   */
  every(key: string, periodMs: number, run: () => Promise<unknown> | unknown): () => void {
    let cancelled = false;
    const arm = () => {
      if (!cancelled) this.set(key, this.clock.now() + periodMs, fire);
    };
    const fire = () => {
      let ran: Promise<unknown>;
      try {
        ran = Promise.resolve(run());
      } catch {
        ran = Promise.resolve();
      }
      ran.then(arm, arm);
    };
    arm();
    return () => {
      cancelled = true;
      this.cancel(key);
    };
  }

  /**
   * Resolves once `ms` of the clock have passed (a pause before a retry), under `key` like any
   * deadline, or at once when `signal` aborts: its owner stopped, and looks for itself what is
   * left to do. A stopped scheduler fires nothing, so only the signal ends a sleep after stop().
   * A key already armed is refused: one of the two waits would never end.
   */
  sleep(key: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.has(key)) return Promise.reject(new Error(`deadline ${key} is already armed`));
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const wake = () => {
        this.cancel(key);
        resolve();
      };
      signal?.addEventListener("abort", wake, { once: true });
      this.set(key, this.clock.now() + ms, () => {
        signal?.removeEventListener("abort", wake);
        resolve();
      });
    });
  }

  has(key: string): boolean {
    return (this.kinds[GENERIC] as Kind).index.has(key);
  }

  at(key: string): number | undefined {
    return this.atOf(GENERIC, key);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private atOf(kind: number, key: string): number | undefined {
    const i = (this.kinds[kind] as Kind).index.get(key);
    return i === undefined ? undefined : this.ats[i];
  }

  private place(kind: number, key: string, at: number): void {
    const index = (this.kinds[kind] as Kind).index;
    const i = index.get(key);
    if (i === undefined) {
      this.keys.push(key);
      this.kindOf.push(kind);
      this.ats.push(at);
      index.set(key, this.keys.length - 1);
      this.up(this.keys.length - 1);
    } else {
      const before = this.ats[i] as number;
      this.ats[i] = at;
      if (at < before) this.up(i);
      else this.down(i);
    }
    this.rearm();
  }

  private remove(kind: number, key: string): boolean {
    const i = (this.kinds[kind] as Kind).index.get(key);
    if (i === undefined) return false;
    this.removeAt(i);
    this.rearm();
    return true;
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
    this.armedAt = this.clock.now();
    this.timer = this.clock.setTimer(next - this.armedAt, () => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.fireDue();
    });
  }

  private fireDue(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    // Once per wake-up, by its most overdue deadline (the heap's first): per deadline, a wave of 100,000 would pay for
    // 100,000 observations.
    if (this.keys.length > 0 && (this.ats[0] as number) <= now)
      this.lateness?.(now - Math.max(this.ats[0] as number, this.armedAt));
    this.firing = true;
    let fired = 0;
    try {
      while (fired < FIRE_BUDGET && this.keys.length > 0 && (this.ats[0] as number) <= now) {
        const key = this.keys[0] as string;
        const kind = this.kindOf[0] as number;
        let fire = (this.kinds[kind] as Kind).fire;
        if (kind === GENERIC) {
          fire = this.handlers.get(key);
          this.handlers.delete(key);
        }
        this.removeAt(0);
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

  private indexAt(i: number): Map<string, number> {
    return (this.kinds[this.kindOf[i] as number] as Kind).index;
  }

  private removeAt(i: number): void {
    const last = this.keys.length - 1;
    this.indexAt(i).delete(this.keys[i] as string);
    if (i !== last) {
      this.keys[i] = this.keys[last] as string;
      this.kindOf[i] = this.kindOf[last] as number;
      this.ats[i] = this.ats[last] as number;
      this.indexAt(i).set(this.keys[i] as string, i);
    }
    this.keys.pop();
    this.kindOf.pop();
    this.ats.pop();
    if (i < this.keys.length) {
      this.down(i);
      this.up(i);
    }
  }

  private swap(a: number, b: number): void {
    const k = this.keys[a] as string;
    const kind = this.kindOf[a] as number;
    const t = this.ats[a] as number;
    this.keys[a] = this.keys[b] as string;
    this.kindOf[a] = this.kindOf[b] as number;
    this.ats[a] = this.ats[b] as number;
    this.keys[b] = k;
    this.kindOf[b] = kind;
    this.ats[b] = t;
    this.indexAt(a).set(this.keys[a] as string, a);
    this.indexAt(b).set(k, b);
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
