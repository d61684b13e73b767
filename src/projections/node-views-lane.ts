import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import { CatchUp, type ProcessorLanes } from "./catch-up.ts";
import type { EventEnvelope } from "./event-envelope.ts";
import type { NodeViews } from "./node-views.ts";

export interface NodeViewsLaneOptions {
  /** Where the fold starts: a snapshot's position (its views seeded), else 0. */
  readonly from: number;
  /** The store's head at start: what the catch-up waits for. */
  readonly head: number;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly stallMs: number;
  /** After each batch the views folded (the node-state snapshot counts them). */
  readonly handled?: (batch: readonly EventEnvelope[]) => void;
}

/**
 * The node read model's processor on `processors`: the one fold of node streams at start-up, from a snapshot (else the
 * start of the store) to the head, and on from there. Its catch-up (`until()`) is what start-up waits for; its lane is
 * the read model's progress.
 */
export function nodeViewsLane(processors: ProcessorLanes, views: NodeViews, options: NodeViewsLaneOptions): CatchUp {
  const { from, handled } = options;
  const catchUp = new CatchUp({
    logger: options.logger,
    clock: options.clock,
    head: options.head,
    message: "recovering nodes: replaying events",
    stallMs: options.stallMs,
    folded: () => views.eventsFolded,
  });
  catchUp.follow(processors, {
    name: "node-views",
    // The views live in memory: each start folds from the snapshot it read, never from a checkpoint.
    checkpoints: { load: () => Promise.resolve(from), save: () => Promise.resolve() },
    handle: (batch) => {
      for (const e of batch) views.handleEnvelope(e);
      handled?.(batch);
    },
  });
  return catchUp;
}
