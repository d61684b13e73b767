import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import { writeFileAtomicAsync } from "../fs/write-file-atomic.ts";
import type { EventEnvelope } from "../projections/event-envelope.ts";
import type { NodeView } from "../projections/node-view.ts";
import { encodeNodeStateSnapshot, type SnapshotAnchor } from "./node-state-snapshot-file.ts";

export interface NodeStateSnapshotterOptions {
  readonly path: string;
  /** Every node view now (a consistent cut: views are immutable, replaced on every change). */
  readonly views: () => readonly NodeView[];
  readonly clock: Clock;
  readonly logger: Logger;
  /** A snapshot is written once this many events were handled since the last one… */
  readonly everyEvents?: number;
  /** …or this long after the last one when anything changed meanwhile, and on stop. */
  readonly everyMs?: number;
  /** After each snapshot written: its file and position (kept along the log for as-of questions). */
  readonly written?: (path: string, position: number) => void;
}

const DEFAULT_EVERY_EVENTS = 100_000;
const DEFAULT_EVERY_MS = 60_000;

/**
 * Writes the node-state snapshot for the read model it follows: told of every batch the node
 * views handled, it writes every node's state at that position, in the background (one write
 * at a time; encoding in slices, the file written off the event loop, atomically). Nothing is
 * written before start(): the catch-up of a full replay is not slowed down by snapshots of its
 * own intermediate states.
 */
export class NodeStateSnapshotter {
  private position: number;
  private anchor: SnapshotAnchor | undefined;
  private writtenPosition: number;
  private sinceWritten = 0;
  private lastWrittenAt: number;
  private writing: Promise<void> | undefined;
  private started = false;
  private stopped = false;

  constructor(
    private readonly options: NodeStateSnapshotterOptions,
    /** The snapshot the views started from, if any. */
    from?: { readonly position: number; readonly anchor: SnapshotAnchor },
  ) {
    this.position = this.writtenPosition = from?.position ?? 0;
    this.anchor = from?.anchor;
    this.lastWrittenAt = options.clock.now();
  }

  /** After the views handled `batch`. */
  handled(batch: readonly EventEnvelope[]): void {
    const last = batch[batch.length - 1];
    if (last === undefined) return;
    const { stream, revision, id, position } = last.recorded;
    this.advanced(position, { stream, revision, id }, batch.length);
  }

  /** The views now reflect `events` more events, up to the one at `position` (`anchor`). */
  private advanced(position: number, anchor: SnapshotAnchor, events: number): void {
    this.position = position;
    this.anchor = anchor;
    this.sinceWritten += events;
    this.maybeWrite();
  }

  /** The views have caught up with the store: from now on snapshots are written (one at once if overdue). */
  start(): void {
    this.started = true;
    this.maybeWrite();
  }

  private maybeWrite(): void {
    if (!this.started || this.stopped || this.writing !== undefined || this.position === this.writtenPosition) return;
    const { everyEvents = DEFAULT_EVERY_EVENTS, everyMs = DEFAULT_EVERY_MS } = this.options;
    if (this.sinceWritten < everyEvents && this.options.clock.now() - this.lastWrittenAt < everyMs) return;
    this.writing = this.write("due").finally(() => (this.writing = undefined));
  }

  /**
   * `cause` is for the log: a write that is due (the first one after a start's catch-up is, after a full replay) runs
   * beside whatever else the process does then; a stop waits for it and writes again only if the views moved on.
   */
  private async write(cause: "due" | "stop"): Promise<void> {
    const { position, anchor } = this;
    if (anchor === undefined) return;
    const { clock, logger, path } = this.options;
    // Taken in one go, before any await: the views at exactly `position`.
    const views = this.options.views();
    const since = this.sinceWritten;
    this.sinceWritten = 0;
    this.lastWrittenAt = clock.now();
    const started = performance.now();
    try {
      const encoded = await encodeNodeStateSnapshot({ position, anchor, views }, new Date(clock.now()).toISOString());
      const encodedMs = performance.now() - started;
      await writeFileAtomicAsync(path, encoded.chunks);
      this.writtenPosition = Math.max(this.writtenPosition, position);
      this.options.written?.(path, position);
      logger.info(
        {
          cause,
          nodes: views.length,
          position,
          bytes: encoded.bytes,
          encodeMs: Math.round(encodedMs),
          encodeOwnMs: Math.round(encoded.slicesMs),
          writeMs: Math.round(performance.now() - started - encodedMs),
          longestSliceMs: Math.round(encoded.longestSliceMs),
        },
        "node-state snapshot written",
      );
    } catch (err) {
      // Only start-up time is lost: the next snapshot (or a full replay) covers it.
      this.sinceWritten += since;
      logger.warn({ err, path, position }, "could not write the node-state snapshot");
    }
  }

  /**
   * On a clean stop, after the views handled their last batch: waits for a write under way, then writes what is newer.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.writing;
    if (this.started && this.position !== this.writtenPosition) await this.write("stop");
  }
}
