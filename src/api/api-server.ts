import { randomUUID } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { NodeInfo } from "../events/catalog/node-info.ts";
import { ShoalError } from "../errors/shoal-error.ts";
import { registerAgentRoutes } from "./agent/agent-routes.ts";
import type { HealthCheck } from "./agent/health-check.ts";
import { sendError } from "./error-body.ts";
import { registerNodeRoutes, type NodeRouteDeps } from "./nodes/node-routes.ts";
import { openApiDocument } from "./openapi.ts";

export interface ApiDeps extends NodeRouteDeps {
  readonly logger: Logger;
  readonly self: NodeInfo;
  /** What /agent/alive and /agent/ready check (NATS, the store). */
  readonly checks?: readonly HealthCheck[];
}

const BODY_LIMIT = 64 * 1024;

export function buildApi(deps: ApiDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomUUID(),
    requestIdHeader: "x-request-id",
    disableRequestLogging: true,
  });
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new ShoalError({ kind: "NotFound", message: `no route ${request.method} ${request.url}` })),
  );
  app.addHook("onResponse", async (request, reply) => {
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, "request");
  });
  const openapi = openApiDocument();
  app.get("/api/v1/openapi.json", async () => openapi);
  registerNodeRoutes(app, deps);
  registerAgentRoutes(app, deps.self, deps.checks);
  return app;
}
