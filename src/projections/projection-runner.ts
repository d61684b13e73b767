import type { Logger } from "pino";
import type { CheckpointStore, EventStore, RecordedEvent, StoreSubscription } from "../events/store/event-store.ts";

export interface ProjectionRunnerOptions {
  readonly name: string;
  readonly store: EventStore;
  readonly logger: Logger;
  readonly handle: (event: RecordedEvent) => Promise<void> | void;
  /** Persist progress here (every `checkpointEvery` events and on stop); in-memory projections leave it out and replay on start. */
  readonly checkpoints?: CheckpointStore;
  readonly checkpointEvery?: number;
  readonly resubscribeDelayMs?: number;
}

/**
 * Follows the store from a checkpoint: every event in store order, handled once per process
 * run, the subscription re-opened from the last handled position if the store drops it.
 */
export class ProjectionRunner {
  private position = 0;
  private savedPosition = 0;
  private subscription: StoreSubscription | undefined;
  private stopped = false;
  private waiters: { position: number; resolve: () => void }[] = [];
  private sinceSave = 0;

  constructor(private readonly options: ProjectionRunnerOptions) {}

  get currentPosition(): number {
    return this.position;
  }

  async start(): Promise<void> {
    const { checkpoints, name } = this.options;
    this.position = (await checkpoints?.load(name)) ?? 0;
    this.savedPosition = this.position;
    this.options.logger.info({ projection: name, from: this.position }, "projection starting");
    this.subscribe();
  }

  private subscribe(): void {
    if (this.stopped) return;
    const sub = this.options.store.subscribeToAll({ after: this.position }, async (event) => {
      await this.options.handle(event);
      this.position = event.position;
      this.sinceSave++;
      if (this.options.checkpoints && this.sinceSave >= (this.options.checkpointEvery ?? 1)) await this.saveCheckpoint();
      this.release();
    });
    this.subscription = sub;
    sub.done.then(
      () => undefined,
      (err: unknown) => {
        if (this.stopped) return;
        this.options.logger.error({ err, projection: this.options.name }, "projection subscription failed; resubscribing");
        setTimeout(() => this.subscribe(), this.options.resubscribeDelayMs ?? 1000).unref();
      },
    );
  }

  private async saveCheckpoint(): Promise<void> {
    if (!this.options.checkpoints || this.position === this.savedPosition) return;
    await this.options.checkpoints.save(this.options.name, this.position);
    this.savedPosition = this.position;
    this.sinceSave = 0;
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.position <= this.position);
    this.waiters = this.waiters.filter((w) => w.position > this.position);
    for (const w of ready) w.resolve();
  }

  /** Resolves once the projection has handled the event at `position` (read-your-writes for the API). */
  waitFor(position: number | undefined, timeoutMs = 10_000): Promise<void> {
    if (position === undefined || position <= this.position) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`projection ${this.options.name} did not reach position ${position}`)), timeoutMs);
      this.waiters.push({
        position,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.stop();
    await this.saveCheckpoint();
  }
}
