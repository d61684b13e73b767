import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { SHOAL_VERSION } from "../version.ts";

/**
 * prom-client's event-loop figures (`nodejs_eventloop_lag_*`): left out, as Shoal's own
 * `shoal_event_loop_lag_*` say the same (event-loop-lag.ts) with the sampling resolution taken off, so
 * an idle loop reads 0 rather than 10 ms.
 */
const DUPLICATED_PREFIX = "nodejs_eventloop_lag_";

let processRegistry: Registry | undefined;

/** Node's process metrics (CPU, memory, GC, handles): once per process however many orchestrators or nodes it runs. */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    for (const metric of registry.getMetricsAsArray())
      if (metric.name.startsWith(DUPLICATED_PREFIX)) registry.removeSingleMetric(metric.name);
    processRegistry = registry;
  }
  return processRegistry;
}

/** Which Shoal process a scrape comes from: `role` tells an orchestrator's /metrics from a compute node's. */
export type ShoalRole = "orchestrator" | "compute";

/** `shoal_build_info{version,nodejs,role} 1`, Prometheus' usual way to put a build's facts on a graph. */
export function registerBuildInfo(registry: Registry, role: ShoalRole): void {
  new Gauge({
    name: "shoal_build_info",
    help: "Always 1; the labels say which Shoal version, on which Node.js, in which role (orchestrator, compute)",
    labelNames: ["version", "nodejs", "role"],
    registers: [registry],
  }).set({ version: SHOAL_VERSION, nodejs: process.version, role }, 1);
}

/** The text exposition of `own` followed by the process's metrics. */
export async function exposition(own: Registry): Promise<string> {
  const [mine, process] = await Promise.all([own.metrics(), processMetrics().metrics()]);
  return `${mine}\n${process}`;
}
