import type { NodeManager } from "../actors/node-manager.ts";
import type { NodeCount } from "../metrics/metric-collectors.ts";
import type { ShoalMetrics } from "../metrics/shoal-metrics.ts";
import type { NodeViews } from "../projections/node-views.ts";
import type { ProcessorProgress } from "../projections/processor.ts";


/**
 * Plugs the components that exist into the metrics' collectors. The composition root owns this
 * list: a new component (the actor registry, the deadline scheduler, the processor host) adds
 * its collector here, and the metrics module does not change.
 */
export function wireMetrics(
  metrics: ShoalMetrics,
  components: { readonly manager: NodeManager; readonly views: NodeViews; readonly processors: readonly ProcessorProgress[] },
): void {
  const { manager, views, processors } = components;
  metrics.registerCollector("nodes", () => {
    // One walk over the read model per scrape (every 15-60 s), not per request.
    const counts = new Map<string, NodeCount>();
    for (const view of views.current()) {
      const key = `${view.health}\0${view.membership}`;
      const known = counts.get(key);
      counts.set(key, { health: view.health, membership: view.membership, count: (known?.count ?? 0) + 1 });
    }
    return [...counts.values()];
  });
  metrics.registerCollector("processors", () =>
    processors.map(({ name, position }) => ({ name, position, lag: Math.max(0, metrics.headPosition - position) })),
  );
  metrics.registerCollector("actors", () => {
    const { resident, passivated } = manager.actorStats;
    return [{ entity: "node", resident, passivated }];
  });
  metrics.registerCollector("deadlines", () => manager.deadlineCount);
}
