import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Logger } from "pino";
import { type Clock, systemClock } from "../actors/clock.ts";
import { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import type { EventStore, RecordedEvent, StoreSubscription } from "../events/store/event-store.ts";
import { EventEnvelope } from "./event-envelope.ts";
import type { Processor, ProcessorProgress } from "./processor.ts";

export interface ProcessorHostOptions {
  readonly store: EventStore;
  readonly logger: Logger;
  /** Times checkpoints (tests fake it). */
  readonly clock?: Clock;
  /**
   * The one deadline heap, on the same clock: the pauses before a resubscription or a batch delivered again, and
   * waitFor's bound. Without one the host keeps its own, stopped with it.
   */
  readonly deadlines?: DeadlineScheduler;
  /** Events held for processors that are behind the subscription, at most. */
  readonly bufferSize?: number;
  /** Events per handle() call, at most. */
  readonly batchSize?: number;
  /** A processor's checkpoint is saved after this many events… */
  readonly checkpointEvery?: number;
  /** …or this long after the last save, whichever comes first, and on stop. */
  readonly checkpointIntervalMs?: number;
  readonly resubscribeDelayMs?: number;
  /** The first pause before a failed batch is delivered again; it doubles up to maxRetryDelayMs. */
  readonly retryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  /**
   * The newest position known to be stored (the orchestrator's own appends, the end recovery
   * found), read only when a lag is asked for: stored events the subscription has not delivered
   * yet are lag too, not only those waiting in the buffer.
   */
  readonly storeHead?: () => number;
}

/** The deadline of the next resubscription after a store failure. */
const RESUBSCRIBE = "processors/resubscribe";

const DEFAULTS = {
  bufferSize: 16_384,
  batchSize: 512,
  checkpointEvery: 1_000,
  checkpointIntervalMs: 1_000,
  resubscribeDelayMs: 1_000,
  retryDelayMs: 250,
  maxRetryDelayMs: 10_000,
};

/**
 * Runs processors over ONE store subscription. Each event is wrapped once in an EventEnvelope
 * (decoded at most once, for all of them) and delivered to every processor in store order.
 *
 * How a slow processor (the publisher) is kept from holding back a fast one (the read model):
 * the subscription appends envelopes to one shared buffer; every processor has its own lane —
 * its own position and its own cursor into that buffer — and takes batches from it at its own
 * pace. The buffer keeps only what some lane has not taken yet, and holds at most `bufferSize`
 * events. When it is full:
 * - if some lane has taken everything (it keeps up), the lanes holding the oldest events are
 *   detached: each reads the store on its own (readAll, in batches) from its position, and
 *   joins the buffer again once its position reaches what the buffer still holds. So a
 *   processor that starts far behind (an old checkpoint) or stalls (NATS down) catches up
 *   without the others waiting for it;
 * - if every lane is busy, the subscription waits (back-pressure): memory stays bounded.
 * The subscription starts from the lowest position of all processors; lanes skip what they
 * have already handled. After a store failure it resubscribes from the newest event received
 * (everything older is still buffered for the lanes that need it, or read by detached lanes).
 *
 * Guarantees: a processor sees every position after its checkpoint once per process run, in
 * order (a batch it failed on is delivered again; nothing else is). Catch-up, whether from
 * the buffer or the store, yields to the event loop after every batch, so timers, NATS and
 * HTTP run while a large backlog is processed. Checkpoints are saved every `checkpointEvery`
 * events or `checkpointIntervalMs`, and on stop; never per event.
 */
export class ProcessorHost {
  private readonly options: typeof DEFAULTS & ProcessorHostOptions;
  private readonly clock: Clock;
  private readonly deadlineHeap: DeadlineScheduler;
  private readonly ownsDeadlines: boolean;
  /** Aborted on stop: a lane waiting out a pause looks at once whether to go on. */
  private readonly stopping = new AbortController();
  private readonly lanes: Lane[] = [];
  /** Shared buffer: items[i] has the absolute sequence number itemsSeq + i. */
  private items: (EventEnvelope | undefined)[] = [];
  private itemsSeq = 0;
  /** Sequence number of the oldest envelope still held. */
  private base = 0;
  /** Every event at or before this position has left the buffer (or was never in it). */
  private floor = 0;
  /** The newest position the subscription delivered. */
  private head = 0;
  private subscription: StoreSubscription | undefined;
  private roomWaiter: (() => void) | undefined;
  private started = false;
  private stopped = false;

  constructor(options: ProcessorHostOptions) {
    this.options = { ...DEFAULTS, ...options };
    this.clock = options.clock ?? systemClock;
    this.ownsDeadlines = options.deadlines === undefined;
    this.deadlineHeap = options.deadlines ?? new DeadlineScheduler(this.clock);
  }

  /** Registers a processor; all are added before start(). */
  add(processor: Processor): ProcessorProgress {
    if (this.started) throw new Error(`processor ${processor.name} added after the host started`);
    if (this.lanes.some((l) => l.processor.name === processor.name))
      throw new Error(`two processors named ${processor.name}`);
    const lane = new Lane(processor, this);
    this.lanes.push(lane);
    return lane;
  }

  /** Every processor's progress (for metrics). */
  get processors(): readonly ProcessorProgress[] {
    return this.lanes;
  }

  /** Loads the checkpoints and starts delivering. */
  async start(): Promise<void> {
    this.started = true;
    for (const lane of this.lanes) await lane.load();
    const from = Math.min(...this.lanes.map((l) => l.position));
    this.floor = this.head = Number.isFinite(from) ? from : 0;
    for (const lane of this.lanes) lane.run();
    this.subscribe();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.deadlineHeap.cancel(RESUBSCRIBE);
    this.stopping.abort();
    this.roomWaiter?.();
    await this.subscription?.stop();
    // In parallel: a processor stuck in handle() (NATS wedged) must not keep the others from saving.
    await Promise.all(this.lanes.map((l) => l.stop()));
    if (this.ownsDeadlines) this.deadlineHeap.stop();
  }

  // ---- the subscription side ----

  private subscribe(): void {
    if (this.stopped) return;
    const sub = this.options.store.subscribeToAll({ after: this.head }, (event) => this.receive(event));
    this.subscription = sub;
    // Only stop() ends a subscription for good: one the store ended on its own, cleanly or not,
    // is taken up again, or read models and the publisher would stop without a word.
    const resubscribe = (err: unknown, why: string) => {
      if (this.stopped || this.subscription !== sub) return;
      this.options.logger.error({ err, after: this.head }, `processor subscription ${why}; resubscribing`);
      this.deadlineHeap.set(RESUBSCRIBE, this.clock.now() + this.options.resubscribeDelayMs, () => this.subscribe());
    };
    sub.done.then(
      () => resubscribe(undefined, "ended by the store"),
      (err: unknown) => resubscribe(err, "failed"),
    );
  }

  private receive(event: RecordedEvent): Promise<void> | void {
    if (event.position <= this.head) return; // a resubscription never delivers anything twice
    this.head = event.position;
    this.items.push(new EventEnvelope(event));
    for (const lane of this.lanes) lane.wake();
    if (this.end - this.base >= this.options.bufferSize) return this.makeRoom();
  }

  private async makeRoom(): Promise<void> {
    while (!this.stopped) {
      this.trim();
      if (this.end - this.base < this.options.bufferSize) return;
      const attached = this.lanes.filter((l) => l.attached);
      if (attached.some((l) => l.nextSeq === this.end)) {
        // Someone keeps up: whoever holds the oldest events reads the store on its own instead.
        for (const l of attached) if (l.nextSeq === this.base) l.detach();
        continue;
      }
      await new Promise<void>((resolve) => (this.roomWaiter = resolve));
      this.roomWaiter = undefined;
    }
  }

  // ---- the buffer, used by the lanes ----

  get end(): number {
    return this.itemsSeq + this.items.length;
  }

  get headPosition(): number {
    return this.head;
  }

  /** What lags are measured from: the newest position delivered or known to be stored. */
  get lagHead(): number {
    return Math.max(this.head, this.options.storeHead?.() ?? 0);
  }

  get bufferFloor(): number {
    return this.floor;
  }

  get settings(): typeof DEFAULTS & ProcessorHostOptions {
    return this.options;
  }

  get timer(): Clock {
    return this.clock;
  }

  get deadlines(): DeadlineScheduler {
    return this.deadlineHeap;
  }

  get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  at(seq: number): EventEnvelope {
    return this.items[seq - this.itemsSeq] as EventEnvelope;
  }

  /** The sequence number of the first buffered event after `position`. */
  seqAfter(position: number): number {
    let lo = this.base;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).position <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops what every attached lane has taken; a lane took something, so a full buffer looks again. */
  trim(): void {
    this.roomWaiter?.();
    let min = this.end;
    for (const l of this.lanes) if (l.attached && l.nextSeq < min) min = l.nextSeq;
    if (min <= this.base) return;
    this.floor = this.at(min - 1).position;
    for (let s = this.base; s < min; s++) this.items[s - this.itemsSeq] = undefined;
    this.base = min;
    const dropped = this.base - this.itemsSeq;
    if (dropped > 4096 && dropped * 2 > this.items.length) {
      this.items = this.items.slice(dropped);
      this.itemsSeq = this.base;
    }
  }
}

/** One processor's position, cursor and delivery loop. */
class Lane implements ProcessorProgress {
  /** Done up to here (reported by the processor when it tracks completion itself). */
  position = 0;
  /** Handed to handle() up to here. */
  delivered = 0;
  /** Next buffer sequence number to take (meaningful while attached). */
  nextSeq = 0;
  attached = true;
  private savedPosition = 0;
  private savedAt = 0;
  private sinceSave = 0;
  private waker: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private waiters: { position: number; resolve: () => void; reject: (error: Error) => void; key: string }[] = [];
  /** Each waitFor's bound is a deadline of its own. */
  private nextWait = 0;

  constructor(
    readonly processor: Processor,
    private readonly host: ProcessorHost,
  ) {}

  get name(): string {
    return this.processor.name;
  }

  get lag(): number {
    return Math.max(0, this.host.lagHead - this.position);
  }

  async load(): Promise<void> {
    this.position = (await this.processor.checkpoints?.load(this.name)) ?? 0;
    this.delivered = this.position;
    this.savedPosition = this.position;
    this.processor.trackCompletion?.((position) => this.complete(position));
    this.savedAt = this.host.timer.now();
    this.host.settings.logger.info({ processor: this.name, from: this.position }, "processor starting");
  }

  run(): void {
    this.loop = this.deliverAll().catch((err: unknown) => {
      this.host.settings.logger.error({ err, processor: this.name }, "processor stopped unexpectedly");
    });
  }

  wake(): void {
    const w = this.waker;
    if (w) {
      this.waker = undefined;
      w();
    }
  }

  detach(): void {
    this.attached = false;
    this.host.settings.logger.info(
      { processor: this.name, position: this.position, head: this.host.headPosition },
      "processor fell behind the shared buffer; it reads the store on its own until it catches up",
    );
  }

  private async deliverAll(): Promise<void> {
    while (!this.host.isStopped) {
      const batch = this.attached ? this.takeFromBuffer() : await this.readFromStore();
      if (batch === undefined) continue;
      if (batch.length === 0) {
        await new Promise<void>((resolve) => (this.waker = resolve));
        continue;
      }
      if (!(await this.deliver(batch))) return;
      await this.maybeSave();
      // Between batches the event loop runs (timers, NATS, HTTP), however long the backlog.
      await yieldToEventLoop();
    }
  }

  private takeFromBuffer(): EventEnvelope[] {
    const { host } = this;
    const end = host.end;
    while (this.nextSeq < end && host.at(this.nextSeq).position <= this.delivered) this.nextSeq++;
    const last = Math.min(end, this.nextSeq + host.settings.batchSize);
    const batch: EventEnvelope[] = [];
    for (let s = this.nextSeq; s < last; s++) batch.push(host.at(s));
    this.nextSeq = last;
    if (batch.length > 0) host.trim();
    return batch;
  }

  /** Undefined: try again (it joined the buffer, or the read failed and was waited out). */
  private async readFromStore(): Promise<EventEnvelope[] | undefined> {
    const { host } = this;
    if (this.delivered >= host.bufferFloor) {
      this.nextSeq = host.seqAfter(this.delivered);
      this.attached = true;
      host.settings.logger.info(
        { processor: this.name, position: this.delivered },
        "processor caught up; it follows the shared buffer again",
      );
      return undefined;
    }
    let events: RecordedEvent[];
    try {
      events = await host.settings.store.readAll({ after: this.delivered, maxCount: host.settings.batchSize });
    } catch (err) {
      host.settings.logger.error(
        { err, processor: this.name, after: this.delivered },
        "processor could not read the store; retrying",
      );
      await this.pause(host.settings.resubscribeDelayMs);
      return undefined;
    }
    if (events.length > 0) return events.map((e) => new EventEnvelope(e));
    // Nothing newer in the store: the subscription cannot be ahead of it, so joining is next;
    // should it not be, look again later rather than spin.
    if (this.delivered < host.bufferFloor) await this.pause(host.settings.resubscribeDelayMs);
    return undefined;
  }

  /** False when the host stopped before the batch was handled. */
  private async deliver(batch: readonly EventEnvelope[]): Promise<boolean> {
    const { settings } = this.host;
    let delay = settings.retryDelayMs;
    for (;;) {
      try {
        await this.processor.handle(batch);
        break;
      } catch (err) {
        if (this.host.isStopped) return false;
        settings.logger.error(
          { err, processor: this.name, from: (batch[0] as EventEnvelope).position, retryInMs: delay },
          "processor failed to handle a batch; delivering it again after a pause",
        );
        await this.pause(delay);
        if (this.host.isStopped) return false;
        delay = Math.min(delay * 2, settings.maxRetryDelayMs);
      }
    }
    this.delivered = (batch[batch.length - 1] as EventEnvelope).position;
    this.sinceSave += batch.length;
    if (!this.processor.trackCompletion) this.complete(this.delivered);
    return true;
  }

  private complete(position: number): void {
    if (position <= this.position) return;
    this.position = position;
    this.release();
  }

  /** Cut short when the host stops. */
  private pause(ms: number): Promise<void> {
    return this.host.deadlines.sleep(`processor/${this.name}/pause`, ms, this.host.stopSignal);
  }

  private async maybeSave(): Promise<void> {
    const { checkpointEvery, checkpointIntervalMs } = this.host.settings;
    if (this.sinceSave >= checkpointEvery || this.host.timer.now() - this.savedAt >= checkpointIntervalMs)
      await this.save();
  }

  private async save(): Promise<void> {
    const checkpoints = this.processor.checkpoints;
    if (!checkpoints || this.position === this.savedPosition) return;
    const position = this.position;
    try {
      await checkpoints.save(this.name, position);
      this.savedPosition = position;
      this.savedAt = this.host.timer.now();
      this.sinceSave = 0;
    } catch (err) {
      // The next batch tries again; until then a restart re-delivers a little more.
      this.host.settings.logger.warn(
        { err, processor: this.name, position },
        "could not save the processor's checkpoint",
      );
    }
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.position <= this.position);
    this.waiters = this.waiters.filter((w) => w.position > this.position);
    for (const w of ready) {
      this.host.deadlines.cancel(w.key);
      w.resolve();
    }
  }

  /** The bound is a deadline on the host's clock; a stop ends every wait it has not met. */
  waitFor(position: number | undefined, timeoutMs = 10_000): Promise<void> {
    if (position === undefined || position <= this.position) return Promise.resolve();
    if (this.host.isStopped) return Promise.reject(this.stoppedBefore(position));
    return new Promise((resolve, reject) => {
      const key = `processor/${this.name}/wait/${this.nextWait++}`;
      this.waiters.push({ position, resolve, reject, key });
      this.host.deadlines.set(key, this.host.timer.now() + timeoutMs, () => {
        this.waiters = this.waiters.filter((w) => w.key !== key);
        reject(
          new Error(
            `processor ${this.name} did not reach position ${position} within ${timeoutMs} ms (it is at ${this.position})`,
          ),
        );
      });
    });
  }

  private stoppedBefore(position: number): Error {
    return new Error(`processor ${this.name} stopped at position ${this.position}, before reaching ${position}`);
  }

  async stop(): Promise<void> {
    this.wake();
    // Flushing also tells a processor waiting for room inside handle() to stop waiting.
    const flushed = this.processor.flush?.();
    await this.loop;
    await flushed;
    await this.save();
    const unmet = this.waiters;
    this.waiters = [];
    for (const w of unmet) {
      this.host.deadlines.cancel(w.key);
      w.reject(this.stoppedBefore(w.position));
    }
  }
}
