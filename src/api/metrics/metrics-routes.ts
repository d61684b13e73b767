import type { FastifyInstance } from "fastify";
import { UNMATCHED_ROUTE, type ShoalMetrics } from "../../metrics/shoal-metrics.ts";
import { METRICS_ROUTE } from "../auth/route-access.ts";

/** The OpenAPI operation, declared beside its handler. */
export const metricsOperation = {
  get: {
    operationId: "metrics",
    description:
      "Prometheus text exposition of Shoal's metrics (`shoal_…`) and the process's. Needs `read:agent`; anonymous read never applies (a scraper sends an API key as a bearer token).",
    responses: { "200": { description: "Metrics", content: { "text/plain": { schema: { type: "string" } } } } },
  },
} as const;

/**
 * GET /metrics, and a histogram of every request's duration by route pattern. The label is the
 * matched pattern (`/api/v1/orchestrator/nodes/:id`), never the URL: node ids, query strings and
 * probes for random paths would otherwise make the label set (and the scrape) grow without bound.
 */
export function registerMetricsRoutes(app: FastifyInstance, metrics: ShoalMetrics): void {
  app.addHook("onResponse", async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
  });
  app.get(METRICS_ROUTE, async (_request, reply) => {
    const body = await metrics.scrape();
    return reply.type(metrics.contentType).send(body);
  });
}
