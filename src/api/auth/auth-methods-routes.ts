import { Schema } from "effect";
import { badRequest, unauthorized } from "../../errors/shoal-error.ts";
import { BasePutRequestFields } from "../bacalhau/base-put-request.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import type { Authenticator } from "./authenticator.ts";
import { API_KEY_METHOD_ROUTE, AUTH_METHODS_ROUTE } from "./route-access.ts";

/** The one method Shoal offers, by the name Bacalhau's CLI would list to choose from. */
const API_KEY_METHOD = API_KEY_METHOD_ROUTE.slice(AUTH_METHODS_ROUTE.length + 1);

/**
 * Bacalhau's authn.Requirement of type "ask": `params` is a JSON Schema of what to ask for. Its
 * CLI (pkg/authn/ask/responder.go) prompts for each required property by name, hiding a writeOnly
 * one, checks the answer against the schema and posts it as MethodData.
 */
const API_KEY_REQUIREMENT = {
  type: "ask",
  params: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { APIKey: { type: "string", writeOnly: true, minLength: 1 } },
    required: ["APIKey"],
  },
} as const;

const Requirement = Schema.Struct({
  type: Schema.Literal("ask", "challenge"),
  params: Schema.Unknown.annotations({ jsonSchema: { description: "A JSON Schema of what to ask the user" } }),
});
/** Bacalhau's apimodels.ListAuthnMethodsResponse (pkg/publicapi/apimodels/auth.go). */
export const ListAuthnMethodsResponse = Schema.Struct({
  Methods: Schema.Record({ key: Schema.String, value: Requirement }),
  NextToken: Schema.String,
});

/**
 * Bacalhau's apimodels.AuthnRequest as its CLI posts it (cmd/util/auth/auth.go): the method's
 * name, MethodData (Go's []byte: base64 of the JSON answer) and the BaseRequest fields.
 */
export const AuthnRequest = Schema.Struct({
  Name: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  MethodData: Schema.String.pipe(Schema.maxLength(4096)),
  ...BasePutRequestFields,
});
/** Bacalhau's apimodels.AuthnResponse: on success the token its CLI sends as `Bearer <token>` from then on. */
export const AuthnResponse = Schema.Struct({
  Authentication: Schema.Struct({ success: Schema.Boolean, token: Schema.String }),
});

/** The API key in MethodData; never echoed in an error, which may be logged. */
function apiKeyOf(methodData: string): string {
  let answer: unknown;
  try {
    answer = JSON.parse(Buffer.from(methodData, "base64").toString("utf8"));
  } catch {
    throw badRequest("MethodData must be base64 of a JSON object {APIKey}");
  }
  const key = (answer as { APIKey?: unknown } | null)?.APIKey;
  if (typeof key !== "string" || key.trim() === "") throw badRequest("MethodData must hold a non-empty APIKey");
  return key.trim();
}

/**
 * What Bacalhau's CLI asks before its first request when it holds no credential
 * (pkg/publicapi/client/v2/client.go `doRequest`, cmd/util/auth/auth.go). Shoal offers one method,
 * asking for an API key: the CLI prompts for it, Shoal checks it as it checks `Bearer <key>`, and
 * hands it back as the token, which the CLI then sends as `Authorization: Bearer <key>` and keeps
 * in its tokens file. Nothing is issued that Shoal did not already accept.
 */
export function authMethodsRoutes(authenticator: Authenticator): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: AUTH_METHODS_ROUTE,
      operationId: "listAuthnMethods",
      tags: ["Auth"],
      summary: "Returns the login methods Bacalhau's CLI can use.",
      description: "Bacalhau's login methods, for its CLI: one, `api-key`, which asks for an API key of API.Auth.Users",
      capability: "public",
      responses: { "200": { description: "The methods by name", schema: ListAuthnMethodsResponse } },
      handler: async () => ({ Methods: { [API_KEY_METHOD]: API_KEY_REQUIREMENT }, NextToken: "" }),
    }),
    defineRoute({
      method: "POST",
      path: API_KEY_METHOD_ROUTE,
      operationId: "authenticateApiKey",
      tags: ["Auth"],
      summary: "Logs Bacalhau's CLI in with an API key.",
      description: "Bacalhau's CLI login with an API key: the key is checked and handed back as the bearer token",
      capability: "public",
      body: AuthnRequest,
      bodyComponent: "AuthnRequest",
      responses: { "200": { description: "The key is valid", schema: AuthnResponse } },
      errors: ["BadRequest", "Unauthorized"],
      handler: async ({ body }) => {
        if (body.Name !== undefined && body.Name !== API_KEY_METHOD)
          throw badRequest(`Name ${JSON.stringify(body.Name)} is not this method's (${API_KEY_METHOD})`);
        const key = apiKeyOf(body.MethodData);
        const result = await authenticator.authenticate(`Bearer ${key}`);
        if (!result.ok) throw unauthorized(result.reason);
        return { Authentication: { success: true, token: key } };
      },
    }),
  ];
}
