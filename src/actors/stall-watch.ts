import type { Clock, TimerHandle } from "./clock.ts";

/**
 * Notices when this process itself stopped running for a while (a blocked event loop, a paused
 * VM, a GC storm): a timer that should tick every `tickMs` and did not. Heartbeats that arrived
 * meanwhile are still queued, so the nodes' silence over that gap is ours, not theirs. Anyone
 * about to act on elapsed time calls check() first, since timers that were due during the
 * stall run in arbitrary order once it ends.
 */
export class StallWatch {
  private lastTick: number;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
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
    this.schedule();
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

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(this.options.tickMs ?? 100, () => {
      this.check();
      this.schedule();
    });
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }
}
