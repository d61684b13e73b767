import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { AuditCheckpoint, AuditSigningKey } from "../../events/chain/audit-checkpoint.ts";
import type { AuditLog } from "../../events/chain/audit-log.ts";
import type { EventEnvelope } from "../event-envelope.ts";
import type { Processor } from "../processor.ts";

export interface AuditCheckpointerOptions {
  readonly log: AuditLog;
  readonly key: AuditSigningKey;
  /** Sends a stored checkpoint outside (NATS); a failure is logged, and the next checkpoint goes all the same. */
  readonly publish: (checkpoint: AuditCheckpoint) => Promise<void> | void;
  readonly clock: Clock;
  readonly deadlines: DeadlineScheduler;
  readonly logger: Logger;
  /** A checkpoint once this many events were handled since the last (0: by time only). */
  readonly every: number;
  /** And at least this often while events are stored (0: by count only). */
  readonly intervalMs: number;
  /** The store's head when it starts: it follows only what comes after. */
  readonly startAt: number;
}

const DEADLINE = "audit-checkpoint";

/**
 * Signs the chain's head with the orchestrator's audit key every `every` events or `intervalMs`,
 * whichever comes first, and never when nothing new was stored: the checkpoint is stored beside
 * the log, then published for copies kept outside Shoal (docs/audit.md). A processor at the head:
 * it only counts what is stored after it started.
 */
export class AuditCheckpointer implements Processor {
  readonly name = "audit-checkpointer";
  readonly checkpoints;
  private sinceLast = 0;
  private lastSigned = 0;
  private running: Promise<AuditCheckpoint | undefined> | undefined;
  private cancelTimer: (() => void) | undefined;

  constructor(private readonly options: AuditCheckpointerOptions) {
    const { startAt } = options;
    this.checkpoints = { load: () => Promise.resolve(startAt), save: () => Promise.resolve() };
  }

  /** Reads where the last checkpoint was, and arms the interval. */
  async start(): Promise<void> {
    this.lastSigned = await this.options.log.latestCheckpointPosition();
    const { intervalMs, deadlines, logger } = this.options;
    if (intervalMs > 0)
      this.cancelTimer = deadlines.every(DEADLINE, intervalMs, () =>
        this.checkpoint().catch((err: unknown) => logger.warn({ err }, "audit checkpoint failed; the next is due")),
      );
  }

  stop(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    this.sinceLast += batch.length;
    if (this.options.every > 0 && this.sinceLast >= this.options.every) await this.checkpoint();
  }

  /** Signs the chain's head now, unless it is signed already; one at a time. */
  checkpoint(): Promise<AuditCheckpoint | undefined> {
    this.running ??= this.sign().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sign(): Promise<AuditCheckpoint | undefined> {
    const { log, key, clock, logger, publish } = this.options;
    const head = await log.chainHead();
    if (head.position <= this.lastSigned || head.link === null) return undefined;
    const checkpoint = key.sign(head.position, head.link.toString("hex"), new Date(clock.now()).toISOString());
    await log.saveAuditCheckpoint(checkpoint);
    this.lastSigned = head.position;
    this.sinceLast = 0;
    logger.info({ position: checkpoint.position, link: checkpoint.link, keyId: key.keyId }, "audit checkpoint signed");
    try {
      await publish(checkpoint);
    } catch (err) {
      // Stored all the same: the API serves it, and the next one is published as usual.
      logger.warn({ err, position: checkpoint.position }, "audit checkpoint not published");
    }
    return checkpoint;
  }
}
