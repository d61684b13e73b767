import type { FleetProgress, VirtualFleetOptions } from "./virtual-fleet.ts";
import { VirtualFleet } from "./virtual-fleet.ts";

export interface SimulationOptions extends VirtualFleetOptions {
  /** Share of the nodes to kill (0 < f ≤ 1) at killAtMs after the start. */
  readonly killFraction?: number;
  readonly killAtMs?: number;
  /** Revive the killed nodes this long after the kill; undefined: they stay dead. */
  readonly reviveAfterMs?: number;
  /** Stop after this long; undefined: run until stop(). */
  readonly durationMs?: number;
  readonly progressMs?: number;
}

/**
 * A virtual fleet on a timeline: started at once, a share killed at a given time and revived
 * later, a progress line (pino) every second, stopped after a duration or by stop().
 */
export class Simulation {
  readonly fleet: VirtualFleet;
  /** Resolves with the last progress once the simulation has stopped (duration over, or stop()). */
  readonly finished: Promise<FleetProgress>;
  private readonly timers: NodeJS.Timeout[] = [];
  private finish: (() => void) | undefined;
  private lastHeartbeats = 0;
  private lastAt = performance.now();
  private readonly startedAt = performance.now();

  private constructor(private readonly options: SimulationOptions) {
    this.fleet = new VirtualFleet(options);
    this.finished = new Promise<void>((resolve) => (this.finish = resolve)).then(() => this.shutdown());
  }

  static start(options: SimulationOptions): Simulation {
    const sim = new Simulation(options);
    sim.run();
    return sim;
  }

  private run(): void {
    const { logger, killFraction, killAtMs, reviveAfterMs, durationMs } = this.options;
    logger.info(
      {
        nodes: this.options.nodes,
        idPrefix: this.options.idPrefix,
        joinRatePerSecond: this.options.joinRatePerSecond,
        heartbeatMs: this.options.heartbeatMs,
        jitterMs: this.options.jitterMs,
        runWorkMs: this.options.runWork?.runMs ?? null,
      },
      "sim starting: one NATS connection and one nkey per virtual node",
    );
    this.fleet.start();
    this.timers.push(setInterval(() => this.report(), this.options.progressMs ?? 1000));
    if (killFraction !== undefined && killFraction > 0) {
      this.after(killAtMs ?? 0, () => {
        const killed = this.fleet.kill(killFraction);
        logger.warn(
          { killed: killed.length, sample: killed.slice(0, 5) },
          "sim killed nodes (agents stopped, connections closed)",
        );
        if (reviveAfterMs !== undefined) {
          this.after(reviveAfterMs, () =>
            logger.info(
              { revived: this.fleet.revive().length },
              "sim reviving the killed nodes (same keys, same sentinels)",
            ),
          );
        }
      });
    }
    if (durationMs !== undefined) this.after(durationMs, () => this.finish?.());
  }

  private after(ms: number, fn: () => void): void {
    this.timers.push(setTimeout(fn, ms));
  }

  private report(): FleetProgress {
    const progress = this.fleet.progress();
    const now = performance.now();
    const heartbeatsPerSecond = Math.round(
      ((progress.heartbeatsAccepted - this.lastHeartbeats) * 1000) / Math.max(1, now - this.lastAt),
    );
    this.lastHeartbeats = progress.heartbeatsAccepted;
    this.lastAt = now;
    this.options.logger.info(
      {
        ...progress,
        heartbeatsPerSecond,
        elapsedS: Math.round((now - this.startedAt) / 100) / 10,
        rssMB: Math.round(process.memoryUsage.rss() / 2 ** 20),
      },
      "sim progress",
    );
    return progress;
  }

  private async shutdown(): Promise<FleetProgress> {
    for (const t of this.timers) clearTimeout(t);
    const last = this.report();
    await this.fleet.stop();
    return last;
  }

  /** Stops every node; resolves with the last progress. */
  stop(): Promise<FleetProgress> {
    this.finish?.();
    return this.finished;
  }
}
