import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";

const PROGRESS_EVERY_MS = 1000;

/**
 * A start-up catch-up's progress toward the store's head as it was at start: a log line about once a second while a
 * long replay runs, and how long it took (wall and CPU: the process's, every thread, the store's reader too).
 */
export class CatchUpProgress {
  private started: number;
  private cpuBefore = process.cpuUsage();
  private lastLog: number;
  private done = false;
  private fail: (err: unknown) => void = () => undefined;
  private readonly failure = new Promise<never>((_, reject) => (this.fail = reject));

  constructor(
    private readonly options: {
      readonly logger: Logger;
      readonly clock: Clock;
      /** The store's head at start: caught up once a batch reaches it. */
      readonly head: number;
      readonly message: string;
    },
  ) {
    this.started = this.lastLog = options.clock.now();
    // Nobody may be waiting yet (until() not called): a failure is not an unhandled rejection.
    this.failure.catch(() => undefined);
  }

  /** The catch-up begins now (the processors start): what elapsed() measures from. */
  begin(): void {
    this.started = this.lastLog = this.options.clock.now();
    this.cpuBefore = process.cpuUsage();
  }

  /** After a batch up to `position`; `events` is how many were folded so far. */
  handled(position: number, events: number): void {
    if (this.done) return;
    if (position >= this.options.head) {
      this.done = true;
      return;
    }
    const now = this.options.clock.now();
    if (now - this.lastLog < PROGRESS_EVERY_MS) return;
    this.lastLog = now;
    const perSecond = Math.round((events * 1000) / Math.max(1, now - this.started));
    this.options.logger.info({ events, position, head: this.options.head, perSecond }, this.options.message);
  }

  /**
   * A batch failed while catching up (a corrupt event): start-up stops here, naming it, rather than wait out the
   * lane's retries of a batch that cannot succeed.
   */
  failed(err: unknown): void {
    if (!this.done) this.fail(err);
  }

  /** Resolves when `caughtUp` does; rejects with the first failure before that. */
  until(caughtUp: Promise<void>): Promise<void> {
    return Promise.race([caughtUp, this.failure]);
  }

  /** Since begin() (else construction): wall time on the clock, and the process's CPU. */
  elapsed(): { readonly ms: number; readonly cpuMs: number } {
    const cpu = process.cpuUsage(this.cpuBefore);
    return { ms: this.options.clock.now() - this.started, cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
  }
}
