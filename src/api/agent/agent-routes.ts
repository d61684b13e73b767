import { Schema } from "effect";
import { configFileValue, type ConfigKey, type ShoalConfig } from "../../config/keys.ts";
import { redactedConfig } from "../../config/redacted-config.ts";
import { NodeInfo } from "../../events/catalog/node-info.ts";
import { ShoalError, unavailable } from "../../errors/shoal-error.ts";
import { buildVersion } from "../../version.ts";
import { AGENT_CONFIG_ROUTE } from "../auth/route-access.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { runChecks, type HealthCheck } from "./health-check.ts";
import { nestedConfig } from "./nested-config.ts";

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
/** Bacalhau's BuildVersionInfo (version.ts). */
export const VersionResponse = Schema.Struct({
  Major: Schema.String,
  Minor: Schema.String,
  GitVersion: Schema.String,
  GitCommit: Schema.String,
  BuildDate: Time,
  GOOS: Schema.String,
  GOARCH: Schema.String,
});
export const AgentNodeResponse = NodeInfo.annotations({ identifier: "NodeInfo" });
export const AgentConfigResponse = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "AgentConfig",
  description:
    "The effective configuration by section, as Bacalhau's types.Bacalhau: {API: {Port: 1234, …}, Orchestrator: " +
    "{…}, …}, each value as a YAML config file writes it (durations `1m`, sizes `1GiB`): secrets aside, the answer " +
    "is a config file Shoal reads. Every key is listed in docs/operations.md.",
});

/** The agent routes; `config` (the orchestrator's effective configuration) adds GET /agent/config. */
export function agentRoutes(self: NodeInfo, checks: readonly HealthCheck[] = [], config?: ShoalConfig): AnyRoute[] {
  // Built once: the configuration does not change while the orchestrator runs.
  const shownConfig =
    config === undefined
      ? undefined
      : nestedConfig(
          Object.fromEntries(
            Object.entries(redactedConfig(config)).map(([key, value]) => [
              key,
              configFileValue(key as ConfigKey, value),
            ]),
          ),
        );
  return [
    // Bacalhau's shape while all is well; 503 with what is wrong while NATS or the store is unusable.
    defineRoute({
      method: "GET",
      path: "/api/v1/agent/alive",
      operationId: "alive",
      tags: ["Agent"],
      summary: "Returns whether the orchestrator is alive.",
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
      tags: ["Agent"],
      summary: "Returns whether the orchestrator is ready, check by check.",
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
      tags: ["Agent"],
      summary: "Returns the info of the node.",
      description:
        "The serving orchestrator's own NodeInfo (its id, type Requester, labels, version), as Bacalhau's agent/node.",
      capability: "read:agent",
      responses: { "200": { description: "This orchestrator's NodeInfo", schema: AgentNodeResponse } },
      handler: async () => self,
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/agent/version",
      operationId: "version",
      tags: ["Agent"],
      summary: "Returns the build version running on the server.",
      description:
        "Bacalhau's BuildVersionInfo: Major, Minor, GitVersion (v<version>), GitCommit and BuildDate (the commit " +
        "the build was made from and its time, as a Go build stamps them; 40 a's and 1970-01-01T00:00:00Z when " +
        "the build had no git), GOOS and GOARCH in Go's words. Public, as in Bacalhau: version checks call it " +
        "without credentials.",
      capability: "public",
      responses: { "200": { description: "Build version", schema: VersionResponse } },
      handler: async () => buildVersion(),
    }),
    ...(shownConfig === undefined
      ? []
      : [
          defineRoute({
            method: "GET",
            path: AGENT_CONFIG_ROUTE,
            operationId: "agentConfig",
            tags: ["Agent"],
            summary: "Returns the current configuration of the node.",
            description:
              "The orchestrator's effective configuration (defaults, files, environment and flags applied), with " +
              "its secrets shown as <redacted>: the join token, NATS passwords and tokens, API.Auth.Users' " +
              "passwords and API keys, and credentials written into URLs. Needs read:agent; anonymous read never " +
              "applies (it shows how the orchestrator is set up).",
            capability: "read:agent",
            responses: { "200": { description: "The configuration", schema: AgentConfigResponse } },
            handler: async () => shownConfig,
          }),
        ]),
  ];
}
