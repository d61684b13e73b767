import { JSONSchema, type Schema } from "effect";
import type { AnonymousAccess } from "../config/auth-users.ts";
import { SHOAL_VERSION } from "../version.ts";
import { API_TAGS, type ApiTag } from "./api-tags.ts";
import { SECURITY_SCHEMES, withSecurity } from "./auth/openapi-security.ts";
import { ErrorResponse } from "./error-body.ts";
import { HTTP_STATUS } from "./error-status.ts";
import { defineRoute, type AnyRoute } from "./route.ts";

type JsonObject = Record<string, unknown>;

const COMPONENTS = "#/components/schemas/";

/**
 * The OpenAPI document of `routes`, generated from their declarations: parameters and request
 * bodies from the schemas the server validates with, responses from their declared schemas,
 * errors through error-status.ts, security from route-access.ts. Schemas with an identifier
 * annotation (NodeState, NodeInfo, Error, …) become components and are referenced.
 */
export function openApiDocument(routes: readonly AnyRoute[], anonymousAccess: AnonymousAccess = "read"): JsonObject {
  const components: Record<string, JSONSchema.JsonSchema7> = {};
  const toJsonSchema = (schema: Schema.Schema.Any): JsonObject =>
    JSONSchema.fromAST(schema.ast, { definitions: components, definitionPath: COMPONENTS }) as unknown as JsonObject;
  const errorSchema = toJsonSchema(ErrorResponse);
  const json = (schema: JsonObject) => ({ "application/json": { schema } });

  const parameters = (route: AnyRoute, where: "path" | "query"): JsonObject[] => {
    const schema = where === "path" ? route.params : route.query;
    if (schema === undefined) return [];
    const object = toJsonSchema(schema as Schema.Schema.Any) as {
      properties?: Record<string, JsonObject>;
      required?: string[];
    };
    return Object.entries(object.properties ?? {}).map(([name, property]) => {
      const description = route.describe?.[name];
      return {
        name,
        in: where,
        required: where === "path" || (object.required ?? []).includes(name),
        ...(description === undefined ? {} : { description }),
        schema: property,
      };
    });
  };

  const operation = (route: AnyRoute): JsonObject => {
    const responses: JsonObject = {};
    for (const [status, response] of Object.entries(route.responses)) {
      const content: JsonObject = {};
      if (response.schema !== undefined)
        content[response.contentType ?? "application/json"] = { schema: toJsonSchema(response.schema) };
      for (const [type, schema] of Object.entries(response.variants ?? {}))
        content[type] = { schema: toJsonSchema(schema) };
      responses[status] = {
        description: response.description,
        ...(Object.keys(content).length === 0 ? {} : { content }),
      };
    }
    const statuses = [...new Set((route.errors ?? []).map((kind) => HTTP_STATUS[kind]))].sort((a, b) => a - b);
    for (const status of statuses) responses[String(status)] = { description: "Error", content: json(errorSchema) };
    const headers = (route.headers ?? []).map((h) => ({
      name: h.name,
      in: "header",
      required: false,
      description: h.description,
      schema: { type: "string" },
    }));
    const params = [...parameters(route, "path"), ...headers, ...parameters(route, "query")];
    return {
      operationId: route.operationId,
      tags: route.tags,
      summary: route.summary,
      description: route.description,
      ...(params.length === 0 ? {} : { parameters: params }),
      ...(route.body === undefined
        ? {}
        : {
            requestBody: {
              // A stop's body is optional: Bacalhau's Go client sends one, its WebUI and Python SDK none.
              required: route.method !== "DELETE",
              content: json(toJsonSchema(requestBody(route.body as Schema.Schema.Any, route.bodyComponent))),
            },
          }),
      responses,
    };
  };

  const paths: Record<string, Record<string, JsonObject>> = {};
  const documented = routes.filter((route) => route.undocumented !== true);
  const used = new Set<ApiTag>(documented.flatMap((route) => route.tags));
  for (const route of documented) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "Shoal",
      version: SHOAL_VERSION,
      description: "Event-sourced node management with Bacalhau's REST paths and shapes",
    },
    tags: (Object.keys(API_TAGS) as ApiTag[])
      .filter((name) => used.has(name))
      .map((name) => ({ name, description: API_TAGS[name] })),
    paths: withSecurity(paths, anonymousAccess),
    components: { securitySchemes: SECURITY_SCHEMES, schemas: components },
  };
}

const requestBody = (schema: Schema.Schema.Any, component: string | undefined): Schema.Schema.Any =>
  component === undefined ? schema : schema.annotations({ identifier: component });

/** GET /api/v1/openapi.json: `document` is asked for at each request (it is built once, after the route list). */
export function openApiRoute(document: () => JsonObject): AnyRoute {
  return defineRoute({
    method: "GET",
    path: "/api/v1/openapi.json",
    operationId: "openapi",
    tags: ["Documentation"],
    summary: "Returns this API's OpenAPI document.",
    description:
      "The OpenAPI 3.0 document generated from the routes' own declarations: the schemas requests are validated " +
      "with, the errors each route answers, and the security the server enforces. /api/v1/docs renders it as a page.",
    capability: "public",
    responses: { "200": { description: "This document" } },
    handler: async () => document(),
  });
}
