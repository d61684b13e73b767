import { Schema } from "effect";
import type { FastifyInstance } from "fastify";
import { UNMATCHED_ROUTE, type ShoalMetrics } from "../../metrics/shoal-metrics.ts";
import { METRICS_ROUTE } from "../auth/route-access.ts";
import { defineRoute, type AnyRoute } from "../route.ts";

/**
 * A histogram of every request's duration by route pattern. The label is the matched pattern
 * (`/api/v1/orchestrator/nodes/:id`), never the URL: node ids, query strings and probes for
 * random paths would otherwise make the label set (and the scrape) grow without bound.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: ShoalMetrics): void {
  app.addHook("onResponse", async (request, reply) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
}

/** GET /metrics. */
export function metricsRoutes(metrics: ShoalMetrics): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: METRICS_ROUTE,
      operationId: "metrics",
      tags: ["Metrics"],
      summary: "Returns the orchestrator's metrics.",
      description:
        "Prometheus text exposition of Shoal's metrics (`shoal_…`) and the process's. Needs `read:agent`; anonymous read never applies (a scraper sends an API key as a bearer token).",
      capability: "read:agent",
      responses: { "200": { description: "Metrics", schema: Schema.String, contentType: "text/plain" } },
      handler: async (_input, _request, reply) => {
        const body = await metrics.scrape();
        return reply.type(metrics.contentType).send(body);
      },
    }),
  ];
}
