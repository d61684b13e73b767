import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";

/** Sampling resolution: a stall shorter than this is not seen, which is fine for a control plane. */
const RESOLUTION_MS = 10;

export interface EventLoopLagSnapshot {
  readonly p50Seconds: number;
  readonly p99Seconds: number;
  readonly maxSeconds: number;
}

let monitor: IntervalHistogram | undefined;

/**
 * Event-loop delay of this process since the last `takeEventLoopLag()` (a scrape). One monitor
 * per process, not per orchestrator: the event loop is the process's, and tests run several
 * orchestrators in one process.
 */
export function takeEventLoopLag(): EventLoopLagSnapshot {
  if (monitor === undefined) {
    monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    monitor.enable();
  }
  // The histogram counts the timer's own resolution as delay; take it off so an idle loop reads 0.
  const seconds = (ns: number) =>
    Number.isFinite(ns) && monitor!.count > 0 ? Math.max(0, ns / 1e9 - RESOLUTION_MS / 1000) : 0;
  const snapshot = {
    p50Seconds: seconds(monitor.percentile(50)),
    p99Seconds: seconds(monitor.percentile(99)),
    maxSeconds: seconds(monitor.max),
  };
  monitor.reset();
  return snapshot;
}
