import type { FastifyInstance } from "fastify";
import type { NodeInfo } from "../../events/catalog/node-info.ts";
import { buildVersion } from "../../version.ts";

export function registerAgentRoutes(app: FastifyInstance, self: NodeInfo): void {
  app.get("/api/v1/agent/alive", async () => ({ Status: "OK" }));
  app.get("/api/v1/agent/node", async () => self);
  app.get("/api/v1/agent/version", async () => buildVersion());
}
