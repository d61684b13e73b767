import type { CheckpointStore } from "../events/store/event-store.ts";
import type { EventEnvelope } from "./event-envelope.ts";

/**
 * Something that follows the store: a read model, the NATS publisher, a workflow. A processor
 * host delivers it every stored event in store order, in batches.
 */
export interface Processor {
  /** Unique per host; also the checkpoint's name. */
  readonly name: string;
  /** Where its position is kept; without one it starts from the beginning of the store on every start. */
  readonly checkpoints?: CheckpointStore;
  /**
   * Handles a batch (positions strictly increasing, each after the last batch it handled). When
   * it resolves, the whole batch counts as handled. When it throws, none of it does: the host
   * waits and delivers the same batch again, the one case in which a position is seen twice.
   */
  handle(batch: readonly EventEnvelope[]): Promise<void> | void;
  /**
   * For a processor that finishes events after handle() returned (the publisher awaits
   * JetStream acks while taking the next batch): the host calls this once before delivering,
   * and the processor reports the position up to which everything is done, retrying its own
   * failures. Its checkpoint, waitFor() and lag then follow these reports.
   */
  trackCompletion?(report: (position: number) => void): void;
  /**
   * Before the next batch, when the processor goes on from its stored checkpoint within this process (a duty taken
   * back from another orchestrator): what it keeps in memory of the store may be stale, as at a start.
   */
  restarted?(): void;
  /** On stop, after the last handle(): finish what was accepted, if it can (bounded by the caller). */
  flush?(): Promise<void>;
}

/** A processor's progress as its host sees it (read-your-writes waits and lag metrics use it). */
export interface ProcessorProgress {
  readonly name: string;
  /** The store position of the last event it has handled. */
  readonly position: number;
  /**
   * How far it is behind the newest event the host has received, in store positions (for
   * SQLite that is a number of events; for EventStoreDB, bytes of its log).
   */
  readonly lag: number;
  /** Resolves once it has handled the event at `position`; rejects after `timeoutMs`. */
  waitFor(position: number | undefined, timeoutMs?: number): Promise<void>;
}
