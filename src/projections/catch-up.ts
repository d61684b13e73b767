import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import type { EventEnvelope } from "./event-envelope.ts";
import type { Processor, ProcessorProgress } from "./processor.ts";

const PROGRESS_EVERY_MS = 1000;

/** Where a read model's processor runs (a processor host). */
export interface ProcessorLanes {
  add(processor: Processor): ProcessorProgress;
}

export interface CatchUpOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  /** The store's head at start: caught up once a batch reaches it. */
  readonly head: number;
  /** Logged about once a second while a long replay runs. */
  readonly message: string;
  /**
   * How long the read model may fold nothing before the wait stops: the catch-up itself may take as long as the
   * store's history needs, as long as it moves.
   */
  readonly stallMs: number;
  /** How many events the read model has folded so far (its own kind's); without it, how many it was handed. */
  readonly folded?: () => number;
}

/**
 * A read model's catch-up at start-up, from its processor's start to the store's head at start: its progress logged
 * about once a second on a long replay, and how long it took (wall and CPU: the process's, every thread, the store's
 * reader too). The wait ends at once with the error of a batch the read model failed before the head (a corrupt event,
 * named by its error) rather than wait out the lane's retries of a batch that cannot succeed; a wedged handler or a
 * store that stopped answering ends it once the lane folds nothing for `stallMs`.
 */
export class CatchUp {
  private started: number;
  private cpuBefore = process.cpuUsage();
  private lastLog: number;
  private delivered = 0;
  private done = false;
  private followed: ProcessorProgress | undefined;
  private fail: (err: unknown) => void = () => undefined;
  private readonly failure = new Promise<never>((_, reject) => (this.fail = reject));

  constructor(private readonly options: CatchUpOptions) {
    this.started = this.lastLog = options.clock.now();
    // Nobody may be waiting yet (until() not called): a failure is not an unhandled rejection.
    this.failure.catch(() => undefined);
  }

  /**
   * Adds the read model's processor to `processors`, watched by this catch-up; its lane is `lane`. A read model is
   * done with a batch when its handle() returns (one that reports its completion later is not one).
   */
  follow(processors: ProcessorLanes, processor: Processor): ProcessorProgress {
    if (this.followed) throw new Error(`a catch-up follows one processor; ${processor.name} is a second`);
    if (processor.trackCompletion) throw new Error(`${processor.name} reports its own completion: no read model`);
    const { checkpoints } = processor;
    this.followed = processors.add({
      name: processor.name,
      checkpoints: {
        load: (name) => {
          // The processors start: what elapsed() measures from.
          this.begin();
          return checkpoints ? checkpoints.load(name) : Promise.resolve(undefined);
        },
        save: (name, position) => (checkpoints ? checkpoints.save(name, position) : Promise.resolve()),
      },
      handle: (batch) => this.handle(processor, batch),
      ...(processor.flush === undefined ? {} : { flush: () => processor.flush?.() ?? Promise.resolve() }),
    });
    return this.followed;
  }

  /** The read model's lane (follow()). */
  get lane(): ProcessorProgress {
    if (!this.followed) throw new Error("a catch-up's lane is read before it follows a processor");
    return this.followed;
  }

  /**
   * Resolves once the read model has folded up to `position` (the head at start unless a later one), for as long as
   * it keeps moving; rejects with the first batch it failed before the head, or once it folds nothing for `stallMs`.
   */
  until(position = this.options.head): Promise<void> {
    return Promise.race([whileMoving(this.lane, position, this.options.stallMs), this.failure]);
  }

  /** Since the processors started (else construction): wall time on the clock, and the process's CPU. */
  elapsed(): { readonly ms: number; readonly cpuMs: number } {
    const cpu = process.cpuUsage(this.cpuBefore);
    return { ms: this.options.clock.now() - this.started, cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
  }

  private begin(): void {
    this.started = this.lastLog = this.options.clock.now();
    this.cpuBefore = process.cpuUsage();
  }

  private handle(processor: Processor, batch: readonly EventEnvelope[]): Promise<void> | void {
    let handling: Promise<void> | void;
    try {
      handling = processor.handle(batch);
    } catch (err) {
      this.failed(err);
      throw err;
    }
    if (!(handling instanceof Promise)) return this.handled(batch);
    return handling.then(
      () => this.handled(batch),
      (err: unknown) => {
        this.failed(err);
        throw err;
      },
    );
  }

  private handled(batch: readonly EventEnvelope[]): void {
    this.delivered += batch.length;
    const last = batch[batch.length - 1];
    if (this.done || !last) return;
    const { head, folded, logger, message, clock } = this.options;
    if (last.position >= head) {
      this.done = true;
      return;
    }
    const now = clock.now();
    if (now - this.lastLog < PROGRESS_EVERY_MS) return;
    this.lastLog = now;
    const events = folded ? folded() : this.delivered;
    const perSecond = Math.round((events * 1000) / Math.max(1, now - this.started));
    logger.info({ events, position: last.position, head, perSecond }, message);
  }

  /** A failure after the head is the lane's own business: it delivers the batch again, as it would any time. */
  private failed(err: unknown): void {
    if (!this.done) this.fail(err);
  }
}

/**
 * Waits for a lane to reach `position` for as long as it keeps moving: a long replay of a big store is never cut short
 * by a fixed bound, while a lane that folds nothing for `stallMs` stops the wait with the lane's own error.
 */
async function whileMoving(lane: ProcessorProgress, position: number, stallMs: number): Promise<void> {
  for (;;) {
    const from = lane.position;
    try {
      return await lane.waitFor(position, stallMs);
    } catch (err) {
      if (lane.position <= from) throw err;
    }
  }
}
