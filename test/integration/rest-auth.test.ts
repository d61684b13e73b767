import { existsSync, readFileSync, statSync } from "node:fs";
import bcrypt from "bcryptjs";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * REST authentication and capabilities against a real orchestrator: real HTTP, real NATS,
 * a real SQLite store, real bcrypt.
 */

const TOKEN = "s3cret";
const CI_KEY = "ci-key-0123456789abcdefghij";
const VIEWER_KEY = "viewer-key-0123456789abcdefghij";
const USERS: AuthUser[] = [
  {
    Alias: "ops",
    Username: "alice",
    Password: "alice's password",
    Capabilities: [{ Actions: ["read:node", "write:node"] }],
  },
  { Username: "bob", Password: bcrypt.hashSync("bob's password", 4), Capabilities: [{ Actions: ["*"] }] },
  { Alias: "ci", APIKey: CI_KEY, Capabilities: [{ Actions: ["read:node"] }, { Actions: ["write:node"] }] },
  { Alias: "viewer", APIKey: VIEWER_KEY, Capabilities: [{ Actions: ["read:*"] }] },
  { Alias: "auditor", Username: "audit", Password: "audit password", Capabilities: [{ Actions: ["read:history"] }] },
];

type Headers = Record<string, string>;
const basic = (user: string, password: string): Headers => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
});
const bearer = (key: string): Headers => ({ authorization: `Bearer ${key}` });
const AS = {
  ops: basic("alice", "alice's password"),
  bob: basic("bob", "bob's password"),
  ci: bearer(CI_KEY),
  viewer: bearer(VIEWER_KEY),
  auditor: basic("audit", "audit password"),
  anonymous: {},
};

async function call(baseUrl: string, method: string, path: string, headers: Headers, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, any>) : undefined,
  };
}

async function withOrchestrator(overrides: Partial<ShoalConfig>) {
  const nats = await TestNatsServer.start();
  const config = orchestratorConfig(nats.url, {
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
    ...overrides,
  });
  const orchestrator = await startOrchestrator(config, silentLogger);
  return { nats, config, orchestrator };
}

describe("with API.Auth.Users and anonymous read (the default)", () => {
  let nats: TestNatsServer;
  let config: ShoalConfig;
  let orchestrator: RunningOrchestrator;
  let nc: NatsConnection;
  const api = (method: string, path: string, headers: Headers, body?: unknown) =>
    call(orchestrator.apiUrl, method, path, headers, body);
  const historyOf = async (id: string) =>
    (await api("GET", `/api/v1/orchestrator/nodes/${id}/history`, AS.auditor)).body!.Items as any[];
  const eventCount = async () => (await storedEvents(config.DataDir)).length;

  beforeAll(async () => {
    ({ nats, config, orchestrator } = await withOrchestrator({ "API.Auth.Users": USERS }));
    nc = await connect({ servers: nats.url });
    for (const id of ["node-1", "node-2", "node-3"]) {
      expect(await joinNode(nc, id, TOKEN)).toMatchObject({ Accepted: true });
    }
  });

  afterAll(async () => {
    await nc?.drain();
    await orchestrator?.stop();
    await nats?.stop();
  });

  it("generates no admin key when users are configured", () => {
    expect(orchestrator.adminKey).toBeUndefined();
    expect(existsSync(adminApiKeyPath(config.DataDir))).toBe(false);
  });

  it("answers 401 with a challenge and Shoal's error body, and writes nothing, without or with wrong credentials", async () => {
    const before = await eventCount();
    const history = await historyOf("node-1");
    const wrong: [string, Headers][] = [
      ["none", {}],
      ["wrong basic password", basic("alice", "alice's passwort")],
      ["unknown user", basic("mallory", "alice's password")],
      ["api key as a password", basic("ci", CI_KEY)],
      ["wrong api key", bearer(`${CI_KEY}x`)],
      ["password as an api key", bearer("alice's password")],
      ["malformed basic", { authorization: "Basic %%%" }],
      ["other scheme", { authorization: `Digest ${CI_KEY}` }],
      ["empty", { authorization: "" }],
    ];
    for (const [name, headers] of wrong) {
      const res = await api(
        "PUT",
        "/api/v1/orchestrator/nodes/node-1",
        { ...headers, "x-shoal-actor": "ops" },
        { Action: "approve" },
      );
      expect(res.status, name).toBe(401);
      expect(res.headers.get("www-authenticate"), name).toMatch(/^Basic realm="shoal".*, Bearer realm="shoal"$/);
      expect(res.body, name).toMatchObject({
        Status: 401,
        Code: "Unauthorized",
        Component: "orchestrator",
        RequestID: expect.any(String),
      });
    }
    // Refused before the body is read: an oversized body from a stranger is 401, not 413.
    expect(
      (await api("PUT", "/api/v1/orchestrator/nodes/node-1", {}, { Action: "approve", Message: "x".repeat(100_000) }))
        .status,
    ).toBe(401);
    expect(await eventCount()).toBe(before);
    expect(await historyOf("node-1")).toEqual(history);
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1", AS.anonymous)).body!.Node.Membership).toBe("PENDING");
  });

  it("answers 401 to wrong credentials even where anonymous callers may read", async () => {
    expect((await api("GET", "/api/v1/orchestrator/nodes", AS.anonymous)).status).toBe(200);
    const res = await api("GET", "/api/v1/orchestrator/nodes", bearer("not-a-key-0123456789"));
    expect(res).toMatchObject({ status: 401, body: { Code: "Unauthorized", Message: "invalid API key" } });
    expect((await api("GET", "/api/v1/agent/node", basic("alice", "nope"))).status).toBe(401);
  });

  it("answers 403 without the capability, naming it, and writes nothing", async () => {
    const before = await eventCount();
    const viewer = await api("PUT", "/api/v1/orchestrator/nodes/node-1", AS.viewer, { Action: "approve" });
    expect(viewer).toMatchObject({
      status: 403,
      body: {
        Status: 403,
        Code: "Forbidden",
        Message: "user viewer does not have the capability write:node",
        Details: { required: "write:node" },
      },
    });
    expect(viewer.headers.get("www-authenticate")).toBeNull();
    expect((await api("PUT", "/api/v1/orchestrator/nodes/node-2", AS.auditor, { Action: "delete" })).status).toBe(403);
    expect(await eventCount()).toBe(before);
  });

  it("lets an auditor with only read:history read the history and nothing else; node operators do not get it", async () => {
    const history = await api("GET", "/api/v1/orchestrator/nodes/node-1/history", AS.auditor);
    expect(history.status).toBe(200);
    expect(history.body!.Items.map((e: any) => e.type)).toEqual(["NodeRegistered", "NodeCredentialBound"]);
    for (const path of ["/api/v1/orchestrator/nodes", "/api/v1/orchestrator/nodes/node-1", "/api/v1/agent/node"]) {
      const res = await api("GET", path, AS.auditor);
      expect(res.status, path).toBe(403);
      expect(res.body!.Message, path).toMatch(/^user auditor does not have the capability read:(node|agent)$/);
    }
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1/history", AS.ops)).body).toMatchObject({
      Status: 403,
      Message: "user ops does not have the capability read:history",
    });
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1/history", AS.viewer)).status).toBe(200); // read:*
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1/history", AS.bob)).status).toBe(200); // *
  });

  it("records the authenticated user as the operator, whatever X-Shoal-Actor says", async () => {
    const mallory = { "x-shoal-actor": "mallory" };
    expect(
      (
        await api(
          "PUT",
          "/api/v1/orchestrator/nodes/node-1",
          { ...AS.ops, ...mallory },
          { Action: "approve", Message: "ours" },
        )
      ).status,
    ).toBe(200);
    expect(
      (await api("PUT", "/api/v1/orchestrator/nodes/node-2", { ...AS.bob, ...mallory }, { Action: "reject" })).status,
    ).toBe(200);
    expect(
      (await api("PUT", "/api/v1/orchestrator/nodes/node-3", { ...AS.ci, ...mallory }, { Action: "delete" })).status,
    ).toBe(200);
    const last = async (id: string) => (await historyOf(id)).at(-1);
    expect(await last("node-1")).toMatchObject({
      type: "NodeApproved",
      metadata: { actor: { type: "operator", id: "ops" }, reason: "ours" },
    });
    // A reject's last event is the key revocation it causes, recorded with the same operator.
    expect((await historyOf("node-2")).slice(-2)).toMatchObject([
      { type: "NodeRejected", metadata: { actor: { type: "operator", id: "bob" } } },
      { type: "NodeCredentialRevoked", metadata: { actor: { type: "operator", id: "bob" } } },
    ]);
    expect(await last("node-3")).toMatchObject({
      type: "NodeDeleted",
      metadata: { actor: { type: "operator", id: "ci" } },
    });
    const everything = JSON.stringify(await Promise.all(["node-1", "node-2", "node-3"].map(historyOf)));
    expect(everything).not.toContain("mallory");
  });

  it("lets anonymous callers list and get nodes and read agent info, but not the history", async () => {
    expect((await api("GET", "/api/v1/orchestrator/nodes", AS.anonymous)).body!.Nodes.length).toBeGreaterThan(0);
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1", AS.anonymous)).body!.Node.Membership).toBe(
      "APPROVED",
    );
    expect((await api("GET", "/api/v1/agent/node", AS.anonymous)).body).toMatchObject({ NodeID: "node-0" });
    expect((await api("GET", "/api/v1/agent/alive", AS.anonymous)).body).toEqual({ Status: "OK" });
    expect((await api("GET", "/api/v1/agent/version", AS.anonymous)).status).toBe(200);
    const history = await api("GET", "/api/v1/orchestrator/nodes/node-1/history", AS.anonymous);
    expect(history).toMatchObject({
      status: 401,
      body: { Code: "Unauthorized", Message: expect.stringContaining("read:history") },
    });
    expect((await api("HEAD", "/api/v1/orchestrator/nodes", AS.anonymous)).status).toBe(200);
  });

  it("declares the security schemes and each operation's needs in the OpenAPI document", async () => {
    const doc = (await api("GET", "/api/v1/openapi.json", AS.anonymous)).body!;
    expect(doc.components.securitySchemes).toMatchObject({
      basicAuth: { type: "http", scheme: "basic" },
      apiKey: { type: "http", scheme: "bearer" },
    });
    const op = (path: string, method: string) => doc.paths[path][method];
    expect(op("/api/v1/orchestrator/nodes", "get")).toMatchObject({
      security: [{ basicAuth: [] }, { apiKey: [] }, {}],
      "x-shoal-capability": "read:node",
    });
    expect(op("/api/v1/orchestrator/nodes/{id}", "put")).toMatchObject({
      security: [{ basicAuth: [] }, { apiKey: [] }],
      "x-shoal-capability": "write:node",
    });
    expect(op("/api/v1/orchestrator/nodes/{id}", "put").responses).toHaveProperty("403");
    expect(op("/api/v1/orchestrator/nodes/{id}/history", "get")).toMatchObject({
      security: [{ basicAuth: [] }, { apiKey: [] }],
      "x-shoal-capability": "read:history",
    });
    expect(op("/api/v1/agent/node", "get")).toMatchObject({ "x-shoal-capability": "read:agent" });
    for (const path of ["/api/v1/agent/alive", "/api/v1/agent/version", "/api/v1/openapi.json"])
      expect(op(path, "get").security, path).toEqual([]);
  });
});

describe("with AnonymousAccess=none and no users: the generated admin key", () => {
  let nats: TestNatsServer;
  let config: ShoalConfig;
  let orchestrator: RunningOrchestrator;
  const api = (method: string, path: string, headers: Headers) => call(orchestrator.apiUrl, method, path, headers);

  beforeAll(async () => {
    ({ nats, config, orchestrator } = await withOrchestrator({ "API.Auth.AnonymousAccess": "none" }));
  });

  afterAll(async () => {
    await orchestrator?.stop();
    await nats?.stop();
  });

  it("creates one admin key, owner-only, and accepts it with every capability", async () => {
    const path = adminApiKeyPath(config.DataDir);
    expect(orchestrator.adminKey).toEqual({ path, created: true });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const key = readFileSync(path, "utf8").trim();
    expect(key).toMatch(/^shoal_api_[A-Za-z0-9_-]{43}$/);
    for (const route of [
      "/api/v1/orchestrator/nodes",
      "/api/v1/orchestrator/nodes/node-0/history",
      "/api/v1/agent/node",
    ]) {
      expect((await api("GET", route, bearer(key))).status, route).toBe(200);
    }
    const history = (await api("GET", "/api/v1/orchestrator/nodes/node-0/history", bearer(key))).body!;
    expect(history.Items[0].metadata.actor).toEqual({ type: "system", id: "node-manager" });
  });

  it("refuses anonymous callers everywhere but the public routes", async () => {
    for (const route of ["/api/v1/orchestrator/nodes", "/api/v1/orchestrator/nodes/node-0", "/api/v1/agent/node"]) {
      const res = await api("GET", route, {});
      expect(res.status, route).toBe(401);
      expect(res.body, route).toMatchObject({ Code: "Unauthorized" });
    }
    for (const route of ["/api/v1/agent/alive", "/api/v1/agent/version", "/api/v1/openapi.json"])
      expect((await api("GET", route, {})).status, route).toBe(200);
    const doc = (await api("GET", "/api/v1/openapi.json", {})).body!;
    expect(doc.paths["/api/v1/orchestrator/nodes"].get.security).toEqual([{ basicAuth: [] }, { apiKey: [] }]);
  });

  it("keeps the same key across restarts", async () => {
    const key = readFileSync(adminApiKeyPath(config.DataDir), "utf8").trim();
    await orchestrator.stop();
    orchestrator = await startOrchestrator(config, silentLogger);
    expect(orchestrator.adminKey).toEqual({ path: adminApiKeyPath(config.DataDir), created: false });
    expect(readFileSync(adminApiKeyPath(config.DataDir), "utf8").trim()).toBe(key);
    expect((await api("GET", "/api/v1/orchestrator/nodes", bearer(key))).status).toBe(200);
  });
});
