import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { EventStore } from "../../events/store/event-store.ts";
import { nodeStream } from "../../events/streams.ts";
import { EventEnvelope } from "../event-envelope.ts";
import type { NodeView } from "../node-view.ts";
import { NodeViews } from "../node-views.ts";
import { AsOfFolds, type IdleDeadline } from "./as-of-folds.ts";
import { JobReadModel } from "./job-read-model.ts";
import { NodeReadModel } from "./node-read-model.ts";
import { positionAsOf } from "./position-as-of.ts";

export interface ClusterAsOfOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Folded states kept per kind (AS_OF_CACHED when absent). */
  readonly cached?: number;
  /**
   * Every node's view after the event at a position at or before the one given (a node-state snapshot kept along the
   * log), where a node read model is folded on from instead of from the start; undefined when there is none.
   */
  readonly nodeSeed?: (
    position: number,
  ) => Promise<{ readonly position: number; readonly views: readonly NodeView[] } | undefined>;
  /** Drops the kept states once nobody asked for this long (ms); without it they stay. */
  readonly keepFor?: { readonly ms: number; readonly deadlines: Pick<IdleDeadline, "set"> };
}

/**
 * The cluster's read models as of any store position, folded from the log with the live models' own evolve: what the
 * node and job read routes answered at that moment, less what the log does not hold (docs/audit.md).
 */
export class ClusterAsOf {
  readonly nodes: AsOfFolds<NodeReadModel>;
  readonly jobs: AsOfFolds<JobReadModel>;

  constructor(private readonly options: ClusterAsOfOptions) {
    const { store, logger, cached, keepFor, clock } = options;
    const idle: IdleDeadline | undefined =
      keepFor === undefined ? undefined : { now: () => clock.now(), set: keepFor.deadlines.set, keepForMs: keepFor.ms };
    const folds = { store, ...(cached === undefined ? {} : { cached }), ...(idle === undefined ? {} : { idle }) };
    const { nodeSeed } = options;
    this.nodes = new AsOfFolds({
      ...folds,
      logger,
      name: "nodes",
      create: () => new NodeReadModel(),
      ...(nodeSeed === undefined
        ? {}
        : {
            seed: async (position: number) => {
              const seed = await nodeSeed(position);
              if (seed === undefined) return undefined;
              const model = new NodeReadModel();
              // Held: the index is built once, after the fold on from the seed.
              model.hold();
              model.views.seed(seed.views);
              return { model, position: seed.position };
            },
          }),
    });
    this.jobs = new AsOfFolds({ ...folds, logger, name: "jobs", create: () => new JobReadModel() });
  }

  now(): number {
    return this.options.clock.now();
  }

  head(): Promise<number> {
    return this.options.store.headPosition();
  }

  /** See positionAsOf. */
  positionAt(time: number): Promise<number> {
    return positionAsOf(this.options.store, time);
  }

  /**
   * One node's view as of `position`, folded from its own stream alone (no whole-cluster fold); undefined when the
   * stream holds no event up to there that made it a node.
   */
  async node(nodeId: string, position: number): Promise<NodeView | undefined> {
    const views = new NodeViews();
    for (const recorded of await this.options.store.readStream(nodeStream(nodeId))) {
      if (recorded.position > position) break;
      views.handleEnvelope(new EventEnvelope(recorded));
    }
    return views.get(nodeId);
  }
}
