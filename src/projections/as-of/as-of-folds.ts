import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Logger } from "pino";
import type { EventStore, RecordedEvent } from "../../events/store/event-store.ts";
import { EventEnvelope } from "../event-envelope.ts";

/** A read model that can be folded from the store's events one at a time, as the live one is. */
export interface FoldedModel {
  /** Every stored event is offered, in store order; the model keeps its own kinds. */
  handle(envelope: EventEnvelope): void;
  /** Before a fold: the model may defer per-event work (an index) to release(). */
  hold?(): void;
  release?(): Promise<void>;
}

/** Where the kept states' idle deadline is armed (the orchestrator's one deadline heap), and its clock. */
export interface IdleDeadline {
  readonly now: () => number;
  readonly set: (key: string, at: number, fire: () => void) => void;
  /** How long kept states stay after the last question; 0: dropped once it is answered. */
  readonly keepForMs: number;
}

export interface AsOfFoldsOptions<M extends FoldedModel> {
  readonly store: EventStore;
  readonly logger: Logger;
  /** What is folded ("nodes", "jobs"): in the logs. */
  readonly name: string;
  /** A fresh model, as at position 0 (the empty cluster). */
  readonly create: () => M;
  /** Folded states kept for the next question; at least 1. */
  readonly cached?: number;
  /** Folds of at least this many positions read through the store's replay (LONG_FOLD). */
  readonly longFold?: number;
  /** Without it, kept states stay until others push them out. */
  readonly idle?: IdleDeadline;
  /**
   * A model already folded up to a position at or before the one asked for (a snapshot kept along the log), held: the
   * fold goes on from there and releases it. Undefined: none, the fold starts from the beginning.
   */
  readonly seed?: (position: number) => Promise<{ readonly model: M; readonly position: number } | undefined>;
}

/** Kept states per kind: each holds a whole read model, as large as the live one at its moment. */
export const AS_OF_CACHED = 2;
/** A kept state this far behind the moment asked for gives way to a seed nearer to it. */
const SEED_OVER = 50_000;
/** Events read per page of a fold. */
const PAGE = 2_048;
/**
 * A fold at least this long reads through the store's replay (which may read ahead on a thread); shorter ones read page
 * by page inline, none past the moment asked for. A fold on from a kept node-state snapshot is at most a twentieth of
 * the log (Orchestrator.Audit.AsOf.Snapshots): for it, starting a reader thread that reads ahead past the moment cost
 * more CPU and time than it saved (docs/performance.md). Every fold holds the model: its index is updated once at the
 * end, for every entity changed.
 */
const LONG_FOLD = 100_000;
const PROGRESS_EVERY_MS = 2_000;

interface Cached<M> {
  readonly model: M;
  /** Every event up to here is folded, none after it. */
  position: number;
  /** When it last answered (a counter): the least recently used goes first. */
  used: number;
  /** Held (a seed): released at the end of the fold that follows. */
  held: boolean;
}

/**
 * A read model as of a store position: a fresh model folded from the store's events 1..P with the live model's own
 * evolve. The latest states are kept (a few, bounded), so a later question folds on from the nearest one at or
 * before it, only the difference, and an earlier one from the nearest before it, else from the start. One fold at a
 * time: a kept state is moved forward in place, never shared by two questions at once.
 */
export class AsOfFolds<M extends FoldedModel> {
  private readonly kept: Cached<M>[] = [];
  private readonly capacity: number;
  private turn: Promise<unknown> = Promise.resolve();
  private uses = 0;
  /** Questions asked and not yet answered: the kept states are in use. */
  private asked = 0;

  constructor(private readonly options: AsOfFoldsOptions<M>) {
    this.capacity = Math.max(1, options.cached ?? AS_OF_CACHED);
  }

  /**
   * `answer` with the model as of `position` (the last event folded is the last at or before it). The answer runs
   * before any other fold may move the model, so it must not wait on anything (it reads, renders and returns).
   */
  read<T>(position: number, answer: (model: M) => T): Promise<T> {
    this.asked++;
    const run = this.turn.then(async () => {
      try {
        return answer((await this.at(position)).model);
      } finally {
        this.asked--;
        // Armed before the answer is handed over: the deadline counts from it.
        this.armIdle();
      }
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Each kept state holds a whole read model: once nobody has asked for a while, the memory goes back. */
  private armIdle(): void {
    const { idle, name, logger } = this.options;
    if (idle === undefined || this.kept.length === 0) return;
    idle.set(`as-of-${name}`, idle.now() + idle.keepForMs, () => {
      // A question asked since arms it again once answered.
      if (this.asked > 0 || this.kept.length === 0) return;
      logger.debug(
        { positions: this.keptPositions },
        `as-of ${name}: kept states dropped after ${idle.keepForMs} ms idle`,
      );
      this.kept.length = 0;
    });
  }

  /** The positions of the states kept now (tests, logs). */
  get keptPositions(): number[] {
    return this.kept.map((k) => k.position).sort((a, b) => a - b);
  }

  private async at(position: number): Promise<Cached<M>> {
    let from: Cached<M> | undefined;
    for (const k of this.kept)
      if (k.position <= position && (from === undefined || k.position > from.position)) from = k;
    if (from === undefined || position - from.position > SEED_OVER) {
      const seeded = await this.options.seed?.(position);
      if (seeded !== undefined && seeded.position > (from?.position ?? 0))
        from = { model: seeded.model, position: seeded.position, used: 0, held: true };
      else from ??= { model: this.options.create(), position: 0, used: 0, held: false };
    }
    if (!this.kept.includes(from)) {
      if (this.kept.length >= this.capacity) {
        const oldest = this.kept.reduce((a, b) => (b.used < a.used ? b : a));
        this.kept.splice(this.kept.indexOf(oldest), 1);
      }
      this.kept.push(from);
    }
    from.used = ++this.uses;
    if (from.position < position || from.held) {
      try {
        await this.fold(from, position);
      } catch (e) {
        // Folded part of the way: its position no longer says what it holds.
        this.kept.splice(this.kept.indexOf(from), 1);
        throw e;
      }
    }
    return from;
  }

  private async fold(kept: Cached<M>, target: number): Promise<void> {
    const { store, logger, name } = this.options;
    const started = performance.now();
    const start = kept.position;
    const long = target - start >= (this.options.longFold ?? LONG_FOLD);
    let lastLog = started;
    let folded = 0;
    // Short folds hold too: a few thousand events later, indexing their changes together is most of the saving.
    if (start < target && !kept.held) {
      kept.model.hold?.();
      kept.held = true;
    }
    if (long) logger.info({ from: start, to: target }, `as of ${target}: folding ${name} from position ${start}`);
    const pages =
      start >= target
        ? []
        : long
          ? store.readAllPages({ after: start, pageSize: PAGE })
          : this.inlinePages(start, target);
    pages: for await (const page of pages) {
      for (const recorded of page) {
        if (recorded.position > target) break pages;
        kept.model.handle(new EventEnvelope(recorded));
        folded++;
      }
      const now = performance.now();
      if (now - lastLog >= PROGRESS_EVERY_MS) {
        lastLog = now;
        const at = (page[page.length - 1] as RecordedEvent).position;
        logger.info(
          { at, to: target, events: folded, ms: Math.round(now - started) },
          `as of ${target}: folding ${name}`,
        );
      }
      // Reads of a store on this thread settle as microtasks: without this a long fold would starve every request.
      await yieldToEventLoop();
    }
    if (kept.held) await kept.model.release?.();
    kept.held = false;
    kept.position = target;
    const ms = Math.round(performance.now() - started);
    if (long) logger.info({ from: start, to: target, events: folded, ms }, `as of ${target}: ${name} folded`);
    else logger.debug({ from: start, to: target, events: folded, ms }, `as of ${target}: ${name} folded`);
  }

  /** A short fold's pages, read on this thread: none past `target` is asked for (positions may skip numbers). */
  private async *inlinePages(after: number, target: number): AsyncGenerator<readonly RecordedEvent[]> {
    for (let cursor = after; cursor < target;) {
      const maxCount = Math.min(PAGE, target - cursor);
      const page = await this.options.store.readAll({ after: cursor, maxCount });
      if (page.length === 0) return;
      yield page;
      if (page.length < maxCount) return;
      cursor = (page[page.length - 1] as RecordedEvent).position;
    }
  }
}
