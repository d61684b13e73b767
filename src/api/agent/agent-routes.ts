import { Schema } from "effect";
import { NodeInfo } from "../../events/catalog/node-info.ts";
import { ShoalError, unavailable } from "../../errors/shoal-error.ts";
import { buildVersion } from "../../version.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { runChecks, type HealthCheck } from "./health-check.ts";

const RETRY_AFTER_SECONDS = 5;

const Time = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } });
const Check = Schema.Struct({
  Name: Schema.String,
  Status: Schema.Literal("OK", "FAILING"),
  Reason: Schema.String,
  Since: Schema.optional(Time),
}).annotations({ identifier: "Check" });

export const AliveResponse = Schema.Struct({ Status: Schema.Literal("OK") });
export const ReadyResponse = Schema.Struct({ Status: Schema.Literal("OK"), Checks: Schema.Array(Check) });
/** Bacalhau's BuildVersionInfo fields that Shoal fills (version.ts). */
export const VersionResponse = Schema.Struct({
  Major: Schema.String,
  Minor: Schema.String,
  GitVersion: Schema.String,
  GOOS: Schema.String,
  GOARCH: Schema.String,
});
export const AgentNodeResponse = NodeInfo.annotations({ identifier: "NodeInfo" });

export function agentRoutes(self: NodeInfo, checks: readonly HealthCheck[] = []): AnyRoute[] {
  return [
    // Bacalhau's shape while all is well; 503 with what is wrong while NATS or the store is unusable.
    defineRoute({
      method: "GET",
      path: "/api/v1/agent/alive",
      operationId: "alive",
      description:
        "Bacalhau's liveness shape; 503 (with Retry-After) while NATS, JetStream or the event store is unusable",
      capability: "public",
      responses: { "200": { description: "Alive", schema: AliveResponse } },
      errors: ["Unavailable"],
      handler: async () => {
        const failing = (await runChecks(checks)).filter((c) => c.Status !== "OK");
        if (failing.length > 0)
          throw unavailable(
            `not alive: ${failing.map((c) => `${c.Name}: ${c.Reason}`).join("; ")}`,
            RETRY_AFTER_SECONDS,
          );
        return { Status: "OK" };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/agent/ready",
      operationId: "ready",
      description:
        "Every check (nats, nats-server when embedded, jetstream, store) with its state and reason; 503 lists them in Details.Checks",
      capability: "read:agent",
      responses: { "200": { description: "Ready", schema: ReadyResponse } },
      errors: ["Unavailable"],
      handler: async () => {
        const report = await runChecks(checks);
        const failing = report.filter((c) => c.Status !== "OK");
        if (failing.length > 0) {
          const message = `not ready: ${failing.map((c) => `${c.Name}: ${c.Reason}`).join("; ")}`;
          throw new ShoalError({
            kind: "Unavailable",
            message,
            retryAfterSeconds: RETRY_AFTER_SECONDS,
            details: { Checks: report },
          });
        }
        return { Status: "OK", Checks: report };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/agent/node",
      operationId: "agentNode",
      capability: "read:agent",
      responses: { "200": { description: "This orchestrator's NodeInfo", schema: AgentNodeResponse } },
      handler: async () => self,
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/agent/version",
      operationId: "version",
      capability: "public",
      responses: { "200": { description: "Build version", schema: VersionResponse } },
      handler: async () => buildVersion(),
    }),
  ];
}
