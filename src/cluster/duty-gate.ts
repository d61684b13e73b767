import type { Logger } from "pino";

/** Stops what a start began (timers, sweeps) when the duty is lost. */
export type DutyStop = () => void;
type DutyStart = () => Promise<DutyStop | void> | DutyStop | void;

/**
 * A duty the cluster runs on one orchestrator at a time (the NATS event publisher, the job workflows): held while this
 * orchestrator has its lease. A sole orchestrator's gates are held from the start and never lost, so the modules run
 * the same code either way.
 */
export class DutyGate {
  private holding: boolean;
  private waiters: (() => void)[] = [];
  private readonly runs = new Set<{ start: DutyStart; stop: DutyStop | undefined; what: string }>();

  constructor(
    readonly name: string,
    private readonly logger: Logger,
    /** True: held from the start and never lost (one orchestrator). */
    readonly always = false,
  ) {
    this.holding = always;
  }

  get held(): boolean {
    return this.holding;
  }

  /** The lease was taken: what waits for the duty goes on, and every start runs again. */
  async gained(): Promise<void> {
    if (this.holding) return;
    this.holding = true;
    const waiting = this.waiters;
    this.waiters = [];
    for (const wake of waiting) wake();
    await Promise.all([...this.runs].map((run) => this.begin(run)));
  }

  /** The lease is gone: every start's work stops now (processors stop at their next batch). */
  lost(): void {
    if (!this.holding || this.always) return;
    this.holding = false;
    for (const run of this.runs) this.end(run);
  }

  /** Resolves once the duty is held; rejects when `signal` aborts first. */
  whenHeld(signal?: AbortSignal): Promise<void> {
    if (this.holding) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener("abort", abort);
        resolve();
      };
      const abort = () => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        reject(new Error(`stopped while waiting for the ${this.name} duty`));
      };
      if (signal?.aborted) return abort();
      signal?.addEventListener("abort", abort, { once: true });
      this.waiters.push(wake);
    });
  }

  /**
   * Runs `start` now if the duty is held, and again each time it is taken; what it returns runs when the duty is lost.
   * Resolves once the start that runs now (if any) has finished; the function it gives back ends it for good.
   */
  async whileHeld(what: string, start: DutyStart): Promise<DutyStop> {
    const run = { start, stop: undefined as DutyStop | undefined, what };
    this.runs.add(run);
    if (this.holding) await this.begin(run);
    return () => {
      this.runs.delete(run);
      this.end(run);
    };
  }

  private async begin(run: { start: DutyStart; stop: DutyStop | undefined; what: string }): Promise<void> {
    try {
      const stop = await run.start();
      if (stop) run.stop = stop;
      // Lost while it was starting: what it began ends at once.
      if (!this.holding) this.end(run);
    } catch (err) {
      this.logger.error({ err, duty: this.name }, `${run.what} failed to start`);
    }
  }

  private end(run: { stop: DutyStop | undefined }): void {
    const stop = run.stop;
    run.stop = undefined;
    stop?.();
  }
}
