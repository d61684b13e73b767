import type { Clock } from "./clock.ts";
import type { DeadlineScheduler } from "./deadline-scheduler.ts";

/**
 * Notices when this process itself stopped running for a while (a blocked event loop, a paused
 * VM, a GC storm): a timer that should tick every `tickMs` and did not. Heartbeats that arrived
 * meanwhile are still queued, so the nodes' silence over that gap is ours, not theirs. Anyone
 * about to act on elapsed time calls check() first, since timers that were due during the
 * stall run in arbitrary order once it ends.
 */
export class StallWatch {
  private lastTick: number;
  private stopTicks: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    /** The tick is a deadline like any other: one heap, one timer. */
    private readonly deadlines: DeadlineScheduler,
    private readonly options: {
      readonly thresholdMs: number;
      readonly tickMs?: number;
      readonly onStall: (fromMs: number, toMs: number) => void;
    },
  ) {
    this.lastTick = clock.now();
  }

  start(): void {
    this.lastTick = this.clock.now();
    this.stopTicks ??= this.deadlines.every("stall-watch", this.options.tickMs ?? 100, () => this.check());
  }

  /** True when the process was stalled since the last look (and reports it once). */
  check(): boolean {
    const now = this.clock.now();
    const gap = now - this.lastTick;
    this.lastTick = now;
    if (gap < this.options.thresholdMs) return false;
    this.options.onStall(now - gap, now);
    return true;
  }

  stop(): void {
    this.stopTicks?.();
  }
}
