import type { Schema } from "effect";
import { JSONSchema } from "effect";
import { EventMetadata } from "../events/catalog/event-metadata.ts";
import { Health, Membership, NodeInfo, Resources } from "../events/catalog/node-info.ts";
import type { AnonymousAccess } from "../config/auth-users.ts";
import { SHOAL_VERSION } from "../version.ts";
import { SECURITY_SCHEMES, withSecurity } from "./auth/openapi-security.ts";
import { metricsOperation } from "./metrics/metrics-routes.ts";
import { HistoryQuery, PutNodeRequest } from "./nodes/node-routes.ts";

// Request schemas are the same effect Schemas the handlers validate with, so this cannot drift.
const schema = (s: Schema.Schema.Any) => {
  const { $schema: _ignored, ...rest } = JSONSchema.make(s) as unknown as Record<string, unknown>;
  return rest;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (s: unknown) => ({ "application/json": { schema: s } });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: "Error", content: json(ref("Error")) }]));
const query = (name: string, type: string, description: string, extra: Record<string, unknown> = {}) => ({
  name,
  in: "query",
  required: false,
  description,
  schema: { type, ...extra },
});
const idParam = { name: "id", in: "path", required: true, description: "Node id or a unique prefix of one", schema: { type: "string" } };

export function openApiDocument(anonymousAccess: AnonymousAccess = "read"): Record<string, unknown> {
  return {
    openapi: "3.0.3",
    info: { title: "Shoal", version: SHOAL_VERSION, description: "Event-sourced node management with Bacalhau's REST paths and shapes" },
    paths: withSecurity({
      "/api/v1/orchestrator/nodes": {
        get: {
          operationId: "listNodes",
          parameters: [
            query("limit", "integer", "Page size", { minimum: 1, maximum: 10000 }),
            query("next_token", "string", "Cursor from the previous page's NextToken"),
            query("order_by", "string", "Sort field", {
              enum: ["id", "type", "approval", "status", "available_cpu", "available_memory", "available_disk", "available_gpu"],
            }),
            query("reverse", "boolean", "Reverse the order"),
            query("filter-approval", "string", "PENDING, APPROVED or REJECTED (any case)"),
            query("filter-status", "string", "HEALTHY, UNHEALTHY, UNKNOWN; CONNECTED = HEALTHY, DISCONNECTED = UNHEALTHY or UNKNOWN"),
            query("labels", "string", "Kubernetes label selector; may repeat (joined with commas)"),
          ],
          responses: {
            "200": { description: "Nodes", content: json({ type: "object", properties: { Nodes: { type: "array", items: ref("NodeState") }, NextToken: { type: "string" } } }) },
            ...errors(400),
          },
        },
      },
      "/api/v1/orchestrator/nodes/{id}": {
        get: {
          operationId: "getNode",
          parameters: [idParam],
          responses: {
            "200": { description: "The node; its weak ETag, W/\"<revision>\", carries its revision (heartbeats change the body, not the revision)", content: json({ type: "object", properties: { Node: ref("NodeState") } }) },
            ...errors(404, 409),
          },
        },
        put: {
          operationId: "updateNode",
          parameters: [idParam, { name: "If-Match", in: "header", required: false, schema: { type: "string" }, description: "ETag from GET (W/\"<revision>\"); 412 if the node has changed" }],
          requestBody: { required: true, content: json(ref("PutNodeRequest")) },
          responses: {
            "200": { description: "Done", content: json({ type: "object", properties: { Success: { type: "boolean" } } }) },
            ...errors(400, 404, 409, 412, 413, 415),
          },
        },
      },
      "/api/v1/orchestrator/nodes/{id}/history": {
        get: {
          operationId: "nodeHistory",
          parameters: [idParam, ...Object.entries(schema(HistoryQuery).properties as Record<string, unknown>).map(([name, s]) => ({ name, in: "query", required: false, schema: s }))],
          responses: {
            "200": { description: "Every event of the node, oldest first", content: json({ type: "object", properties: { Items: { type: "array", items: ref("ClusterEvent") }, NextToken: { type: "string" } } }) },
            ...errors(400, 404, 409),
          },
        },
      },
      "/api/v1/agent/alive": {
        get: {
          operationId: "alive",
          description: "Bacalhau's liveness shape; 503 (with Retry-After) while NATS or the event store is unusable",
          responses: { "200": { description: "Alive", content: json({ type: "object", properties: { Status: { type: "string", enum: ["OK"] } } }) }, ...errors(503) },
        },
      },
      "/api/v1/agent/ready": {
        get: {
          operationId: "ready",
          description: "Every check (nats, nats-server when embedded, store) with its state and reason; 503 lists them in Details.Checks",
          responses: {
            "200": { description: "Ready", content: json({ type: "object", properties: { Status: { type: "string", enum: ["OK"] }, Checks: { type: "array", items: ref("Check") } } }) },
            ...errors(503),
          },
        },
      },
      "/api/v1/agent/node": { get: { operationId: "agentNode", responses: { "200": { description: "This orchestrator's NodeInfo", content: json(ref("NodeInfo")) } } } },
      "/api/v1/agent/version": { get: { operationId: "version", responses: { "200": { description: "Build version", content: json({ type: "object" }) } } } },
      "/api/v1/openapi.json": { get: { operationId: "openapi", responses: { "200": { description: "This document" } } } },
      "/metrics": metricsOperation,
    }, anonymousAccess),
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: {
        PutNodeRequest: schema(PutNodeRequest),
        NodeInfo: schema(NodeInfo),
        Resources: schema(Resources),
        NodeState: {
          type: "object",
          properties: {
            Info: ref("NodeInfo"),
            Membership: schema(Membership),
            Connection: { type: "string", enum: ["CONNECTED", "DISCONNECTED"] },
            ConnectionState: {
              type: "object",
              properties: {
                Status: { type: "string", enum: ["CONNECTED", "DISCONNECTED"] },
                LastHeartbeat: { type: "string", format: "date-time", nullable: true },
                ConnectedSince: { type: "string", format: "date-time" },
                DisconnectedSince: { type: "string", format: "date-time" },
              },
            },
            Health: schema(Health),
            Revision: { type: "integer" },
          },
        },
        ClusterEvent: {
          type: "object",
          properties: {
            id: { type: "string" },
            type: { type: "string" },
            stream: { type: "string" },
            revision: { type: "integer" },
            position: { type: "integer" },
            time: { type: "string", format: "date-time" },
            data: { type: "object" },
            metadata: schema(EventMetadata),
          },
        },
        Check: {
          type: "object",
          properties: {
            Name: { type: "string" },
            Status: { type: "string", enum: ["OK", "FAILING"] },
            Reason: { type: "string" },
            Since: { type: "string", format: "date-time" },
          },
        },
        Error: {
          type: "object",
          properties: {
            Status: { type: "integer" },
            Code: { type: "string" },
            Message: { type: "string" },
            RequestID: { type: "string" },
            Component: { type: "string" },
            Hint: { type: "string" },
            Details: { type: "object" },
          },
        },
      },
    },
  };
}
