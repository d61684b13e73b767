import { Schema } from "effect";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { Authenticator } from "../../../src/api/auth/authenticator.ts";
import { registerAuth } from "../../../src/api/auth/register-auth.ts";
import { CAPABILITIES, WhoamiResponse } from "../../../src/api/auth/whoami-response.ts";
import { whoamiRoute } from "../../../src/api/auth/whoami-route.ts";
import { openApiDocument } from "../../../src/api/openapi.ts";
import { registerRoutes } from "../../../src/api/route.ts";
import type { AnonymousAccess, AuthUser } from "../../../src/config/auth-users.ts";

const OPERATOR_KEY = "operator-key-0123456789";
const READER_KEY = "reader-key-0123456789ab";
const USERS: AuthUser[] = [
  { Alias: "alice", APIKey: OPERATOR_KEY, Capabilities: [{ Actions: ["read:*", "write:node"] }] },
  { Alias: "robot", APIKey: READER_KEY, Capabilities: [{ Actions: ["read:node"] }] },
  { Username: "bob", Password: "correct-horse", Capabilities: [{ Actions: ["*"] }] },
];

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function whoami(anonymousAccess: AnonymousAccess, authorization?: string) {
  app = Fastify();
  registerAuth(app, { users: USERS, anonymousAccess }, new Authenticator(USERS));
  registerRoutes(app, [whoamiRoute(anonymousAccess)]);
  const res = await app.inject({
    method: "GET",
    url: "/api/v1/orchestrator/whoami",
    headers: authorization === undefined ? {} : { authorization },
  });
  return { status: res.statusCode, body: res.json() };
}

describe("GET /api/v1/orchestrator/whoami", () => {
  it("names an API key's user and expands its wildcards", async () => {
    const { status, body } = await whoami("none", `Bearer ${OPERATOR_KEY}`);
    expect(status).toBe(200);
    expect(Schema.decodeUnknownSync(WhoamiResponse, { onExcessProperty: "error" })(body)).toEqual({
      Id: "alice",
      Anonymous: false,
      Capabilities: ["read:node", "write:node", "read:job", "read:agent", "read:history"],
      AnonymousAccess: "none",
    });
  });

  it("names a password user, and a reader has no write", async () => {
    const basic = `Basic ${Buffer.from("bob:correct-horse").toString("base64")}`;
    // "*" is every capability there is.
    expect((await whoami("read", basic)).body).toMatchObject({ Id: "bob", Capabilities: [...CAPABILITIES] });
    expect(CAPABILITIES).toContain("write:job");
    expect((await whoami("read", `Bearer ${READER_KEY}`)).body).toMatchObject({
      Id: "robot",
      Capabilities: ["read:node"],
    });
  });

  it("answers an anonymous caller with the reads AnonymousAccess grants, never the history", async () => {
    expect((await whoami("read")).body).toEqual({
      Anonymous: true,
      Capabilities: ["read:node", "read:job", "read:agent"],
      AnonymousAccess: "read",
    });
    expect((await whoami("none")).body).toEqual({ Anonymous: true, Capabilities: [], AnonymousAccess: "none" });
  });

  it("refuses wrong credentials with 401 rather than answering as anonymous", async () => {
    const wrongKey = await whoami("read", "Bearer not-a-key-of-anyone-at-all");
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.Message).toBe("invalid API key");
    const wrongPassword = await whoami("read", `Basic ${Buffer.from("bob:wrong").toString("base64")}`);
    expect(wrongPassword.status).toBe(401);
  });
});

describe("whoami in the OpenAPI document", () => {
  it("takes credentials or none, and documents the 401 for wrong ones", () => {
    const doc = openApiDocument([whoamiRoute("read")]) as any;
    const operation = doc.paths["/api/v1/orchestrator/whoami"].get;
    expect(operation.security).toEqual([{ basicAuth: [] }, { apiKey: [] }, {}]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "401"]));
    expect(operation.responses["403"]).toBeUndefined();
  });
});
