import type { NodeManager } from "../actors/node-manager.ts";
import type { ShoalMetrics } from "../metrics/shoal-metrics.ts";
import type { NodeIndex } from "../projections/node-index/node-index.ts";
import type { ProcessorProgress } from "../projections/processor.ts";

/**
 * Plugs the node list's counts, the processors' progress and the deadline heap into the metrics'
 * collectors (the API module does, as it serves /metrics). Each entity module registers its own
 * actors' counts where it builds them, so a new kind adds no line here; the metrics module does not change.
 */
export function wireMetrics(
  metrics: ShoalMetrics,
  components: {
    readonly manager: NodeManager;
    readonly index: NodeIndex;
    readonly processors: readonly ProcessorProgress[];
  },
): void {
  const { manager, index, processors } = components;
  // Read off the list's index partitions: O(1) in the fleet size, whatever the scrape rate.
  metrics.registerCollector("nodes", () => index.counts());
  metrics.registerCollector("nodeRestrictions", () => index.restrictions());
  // Each processor's own lag (ProcessorHost: measured from the store's head as this orchestrator
  // knows it), a subtraction per processor per scrape: one definition for the metric and the host.
  metrics.registerCollector("processors", () => processors.map(({ name, position, lag }) => ({ name, position, lag })));
  metrics.registerCollector("deadlines", () => manager.deadlineCount);
}
