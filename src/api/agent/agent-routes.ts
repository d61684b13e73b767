import type { FastifyInstance } from "fastify";
import type { NodeInfo } from "../../events/catalog/node-info.ts";
import { ShoalError, unavailable } from "../../errors/shoal-error.ts";
import { buildVersion } from "../../version.ts";
import { runChecks, type HealthCheck } from "./health-check.ts";

const RETRY_AFTER_SECONDS = 5;

export function registerAgentRoutes(app: FastifyInstance, self: NodeInfo, checks: readonly HealthCheck[] = []): void {
  // Bacalhau's shape while all is well; 503 with what is wrong while NATS or the store is unusable.
  app.get("/api/v1/agent/alive", async () => {
    const failing = (await runChecks(checks)).filter((c) => c.Status !== "OK");
    if (failing.length > 0) throw unavailable(`not alive: ${failing.map((c) => `${c.Name}: ${c.Reason}`).join("; ")}`, RETRY_AFTER_SECONDS);
    return { Status: "OK" };
  });
  app.get("/api/v1/agent/ready", async () => {
    const report = await runChecks(checks);
    const failing = report.filter((c) => c.Status !== "OK");
    if (failing.length > 0) {
      const message = `not ready: ${failing.map((c) => `${c.Name}: ${c.Reason}`).join("; ")}`;
      throw new ShoalError({ kind: "Unavailable", message, retryAfterSeconds: RETRY_AFTER_SECONDS, details: { Checks: report } });
    }
    return { Status: "OK", Checks: report };
  });
  app.get("/api/v1/agent/node", async () => self);
  app.get("/api/v1/agent/version", async () => buildVersion());
}
