import type { NodeManager } from "../../src/actors/node-manager.ts";
import type { EventStore } from "../../src/events/store/event-store.ts";
import type { NodeView } from "../../src/projections/node-view.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import { nodeViewsLane } from "../../src/projections/node-views-lane.ts";
import { CATCH_UP_STALL_MS } from "../../src/orchestrator/module.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { systemClock } from "../../src/actors/clock.ts";
import { silentLogger } from "./fixtures.ts";

export interface RecoveredNodes {
  /** The read model, caught up with the store's head at start (and released). */
  readonly views: NodeViews;
  /** How many node events the read model folded (a snapshot's not counted). */
  readonly events: number;
  /** The store's head when recovery began: the read model folded up to here. */
  readonly position: number;
  /** How many node ids the manager knows after adopting. */
  readonly nodes: number;
}

/**
 * What the orchestrator does at start-up, through the lane it builds (nodeViewsLane): the node read model, on a
 * processor host, folds the store from a snapshot's views and position (else from the start) up to the store's head,
 * then the node manager adopts what it folded. A corrupt event the fold reads rejects, naming it, as start-up stops.
 */
export async function recoverNodes(
  manager: NodeManager,
  store: EventStore,
  from?: { readonly position: number; readonly views: readonly NodeView[] },
): Promise<RecoveredNodes> {
  const views = new NodeViews();
  views.hold();
  if (from) views.seed(from.views);
  const position = await store.headPosition();
  const host = new ProcessorHost({ store, logger: silentLogger });
  const catchUp = nodeViewsLane(host, views, {
    from: from?.position ?? 0,
    head: position,
    logger: silentLogger,
    clock: systemClock,
    stallMs: CATCH_UP_STALL_MS,
  });
  await host.start();
  try {
    await catchUp.until();
  } finally {
    await host.stop();
  }
  await views.release();
  manager.adoptRecovered(views.recovered());
  return { views, events: views.eventsFolded, position, nodes: manager.nodeCount };
}
