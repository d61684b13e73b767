import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Schema } from "effect";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes, buildApi, type ApiDeps } from "../../src/api/api-server.ts";
import { ErrorResponse } from "../../src/api/error-body.ts";
import { defaultConfig } from "../../src/config/keys.ts";
import type { AnyRoute } from "../../src/api/route.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";

// Routes and the document are declared from one list (src/api/route.ts). These tests hold the
// server to it: what Fastify serves is what the document lists, and what the routes answer
// decodes with the schemas the document was generated from.

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let adminKey: string;
const TOKEN = "s3cret";

type Doc = { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> };

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      authorization: `Bearer ${adminKey}`,
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // An event stream never ends: its headers are the answer.
  if (res.headers.get("content-type")?.startsWith("text/event-stream") === true) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, text: "" };
  }
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * The routes as declared, for their schemas. Only their declarations are read here: no handler
 * runs, so the dependencies they would use are never reached.
 */
const unusedDeps = {
  logger: silentLogger,
  auth: { users: [], anonymousAccess: "read" },
  metrics: {},
  self: {},
  config: defaultConfig(),
  feed: {},
  stream: {},
  audit: { log: undefined },
} as unknown as ApiDeps;
const declared: readonly AnyRoute[] = apiRoutes(unusedDeps);
const declaredBy = (operationId: string): AnyRoute => {
  const route = declared.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`no route ${operationId}`);
  return route;
};

/** Decodes a real response body with the schema its route declares for that status (unknown fields refused). */
function expectDeclaredShape(operationId: string, status: number, text: string): unknown {
  const response = declaredBy(operationId).responses[String(status)];
  expect(response?.schema, `${operationId} declares no schema for ${status}`).toBeDefined();
  const body: unknown = JSON.parse(text);
  const decoded = Schema.decodeUnknownEither(response!.schema as Schema.Schema<unknown, unknown>, {
    onExcessProperty: "error",
    errors: "all",
  })(body);
  expect(decoded._tag === "Left" ? String(decoded.left) : "ok", operationId).toBe("ok");
  return body;
}

/** `printRoutes({ commonPrefix: false })` is a tree of path segments: "METHOD /full/path" for every route. */
function servedOperations(tree: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split("\n")) {
    const m = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)$/.exec(line.replace(/\u00a0/g, " "));
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    // HEAD is Fastify's own companion of every GET (exposeHeadRoutes), not a route of ours.
    for (const method of m[3]!.split(", ").filter((x) => x !== "HEAD")) out.push(`${method} ${stack.join("")}`);
  }
  return out.sort();
}

beforeAll(async () => {
  nats = await TestNatsServer.start();
  const config = orchestratorConfig(nats.url, {
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  adminKey = readFileSync(adminApiKeyPath(config.DataDir), "utf8").trim();
  nc = await connect({ servers: nats.url });
  for (const id of ["node-1", "node-2"])
    expect((await joinNode(nc, id, TOKEN, computeInfo(id, { zone: "a" }))).Accepted).toBe(true);
  // node-2's live fields (capacities, executions) come from a report, not from events.
  const report = {
    AvailableCapacity: { CPU: 3, Memory: 1024 },
    QueueUsedCapacity: { CPU: 1 },
    RunningExecutions: 1,
    EnqueuedExecutions: 2,
  };
  expect(await new ComputeClient(nc, "node-2").updateResources(report)).toEqual({ Accepted: true });
});

afterAll(async () => {
  await nc?.drain();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("the audit routes on a store with no hash chain", () => {
  it("answer 501, saying why, to a caller allowed to read them", async () => {
    const app = buildApi({
      ...unusedDeps,
      auth: {
        users: [{ Username: "audit", Password: "pw", Capabilities: [{ Actions: ["read:history"] }] }],
        anonymousAccess: "none",
      },
    } as unknown as ApiDeps);
    const authorization = `Basic ${Buffer.from("audit:pw").toString("base64")}`;
    try {
      for (const path of ["genesis", "chain", "checkpoints"]) {
        const res = await app.inject({
          method: "GET",
          url: `/api/v1/orchestrator/audit/${path}`,
          headers: { authorization },
        });
        expect(res.statusCode, path).toBe(501);
        expect(JSON.parse(res.body), path).toMatchObject({
          Code: "NotImplemented",
          Message: expect.stringMatching(/keeps no hash chain; .* need the SQLite store/),
        });
      }
    } finally {
      await app.close();
    }
  });
});

describe("the OpenAPI document and the routes", () => {
  it("lists every route Fastify registers, with its declared operationId, and no other", async () => {
    const app = buildApi(unusedDeps);
    await app.ready();
    // Served and no operation of it: the page that renders the document, and Bacalhau's legacy redirects, which its
    // swagger leaves out too (as it does POST /jobs: no job routes here).
    const pages = declared.filter((r) => r.undocumented === true).map((r) => `${r.method} ${r.path}`);
    expect(pages.sort()).toEqual(["GET /", "GET /api/v1/docs", "GET /livez", "GET /version"]);
    const served = servedOperations(app.printRoutes({ commonPrefix: false })).filter((op) => !pages.includes(op));
    const doc = JSON.parse((await app.inject({ method: "GET", url: "/api/v1/openapi.json" })).body) as Doc;
    await app.close();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`),
      )
      .sort();
    expect(served.length).toBeGreaterThanOrEqual(10);
    expect(documented).toEqual(served);
    for (const route of declared.filter((r) => r.undocumented !== true)) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
      expect(doc.paths[path]?.[route.method.toLowerCase()]?.operationId, `${route.method} ${route.path}`).toBe(
        route.operationId,
      );
    }
    expect(new Set(declared.map((r) => r.operationId)).size).toBe(declared.length);
  });

  it("documents every actor type an event's metadata may name, the workflows' too", async () => {
    const app = buildApi(unusedDeps);
    const doc = JSON.parse((await app.inject({ method: "GET", url: "/api/v1/openapi.json" })).body) as {
      components: { schemas: { ClusterEvent: { properties: { metadata: unknown } } } };
    };
    await app.close();
    const metadata = JSON.stringify(doc.components.schemas.ClusterEvent.properties.metadata);
    expect(metadata).toContain(JSON.stringify(["operator", "node", "system", "workflow"]));
    // A node history holding the drain workflow's event decodes with the declared schema.
    const item = {
      id: "e-1",
      type: "NodeDrainCompleted",
      stream: "node-n1",
      revision: 3,
      position: 9,
      time: "2026-11-29T08:00:00.000Z",
      data: { NodeID: "n1", DaemonStopped: 0 },
      metadata: {
        time: "2026-11-29T08:00:00.000Z",
        actor: { type: "workflow", id: "node-drain" },
        reason: "node n1 is drained",
        correlationId: "c",
        causationId: "c",
        schemaVersion: 1,
      },
    };
    expectDeclaredShape("nodeHistory", 200, JSON.stringify({ Items: [item], NextToken: "" }));
  });

  it("serves every documented operation, answering a status it documents", async () => {
    const doc = JSON.parse((await call("GET", "/api/v1/openapi.json")).text) as Doc;
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(10);
    for (const { path, method, op } of operations) {
      // A PUT with an empty body is refused by validation (400): it proves the route without changing anything.
      const res = await call(method.toUpperCase(), path.replace("{id}", "node-1"), method === "put" ? {} : undefined);
      const what = `${method.toUpperCase()} ${path} → ${res.status} ${res.text.slice(0, 200)}`;
      expect(res.text, what).not.toMatch(/"Message":"no route /);
      expect(Object.keys(op.responses), what).toContain(String(res.status));
    }
  });
});

describe("real responses decode with their declared schemas", () => {
  it("list, get (with live capacities and without ComputeNodeInfo), put, history", async () => {
    const list = await call("GET", "/api/v1/orchestrator/nodes?limit=2");
    expect(list.status).toBe(200);
    const page = expectDeclaredShape("listNodes", 200, list.text) as { Nodes: unknown[]; NextToken: string };
    expect(page.Nodes).toHaveLength(2);
    expect(page.NextToken).not.toBe("");
    const rest = await call("GET", `/api/v1/orchestrator/nodes?next_token=${page.NextToken}`);
    expect((expectDeclaredShape("listNodes", 200, rest.text) as { Nodes: unknown[] }).Nodes).toHaveLength(1);

    const node2 = await call("GET", "/api/v1/orchestrator/nodes/node-2");
    expect(node2.status).toBe(200);
    const state = expectDeclaredShape("getNode", 200, node2.text) as { Node: { Info: { ComputeNodeInfo: unknown } } };
    expect(state.Node.Info.ComputeNodeInfo).toMatchObject({
      AvailableCapacity: { CPU: 3, Memory: 1024 },
      QueueCapacity: { CPU: 1 },
      RunningExecutions: 1,
      EnqueuedExecutions: 2,
    });
    // The orchestrator itself is a Requester: no ComputeNodeInfo at all.
    const self = await call("GET", "/api/v1/orchestrator/nodes/node-0");
    expect(
      (expectDeclaredShape("getNode", 200, self.text) as { Node: { Info: Record<string, unknown> } }).Node.Info,
    ).not.toHaveProperty("ComputeNodeInfo");

    const etag = (await call("GET", "/api/v1/orchestrator/nodes/node-1")).headers.get("etag");
    expect(etag).toMatch(/^W\/"\d+"$/);
    const put = await call(
      "PUT",
      "/api/v1/orchestrator/nodes/node-1",
      { Action: "approve", Message: "checked" },
      { "if-match": etag! },
    );
    expect(put.status).toBe(200);
    expect(expectDeclaredShape("updateNode", 200, put.text)).toEqual({ Success: true });

    const history = await call("GET", "/api/v1/orchestrator/nodes/node-1/history?limit=1");
    expect(history.status).toBe(200);
    expect((expectDeclaredShape("nodeHistory", 200, history.text) as { NextToken: string }).NextToken).not.toBe("");
    const all = await call("GET", "/api/v1/orchestrator/nodes/node-1/history");
    const items = (
      expectDeclaredShape("nodeHistory", 200, all.text) as { Items: { type: string; metadata: { reason?: string } }[] }
    ).Items;
    expect(items.map((e) => e.type)).toContain("NodeApproved");
    expect(items.at(-1)?.metadata.reason).toBe("checked");
  });

  it("the event feed: a page as JSON, and the NDJSON it documents beside it", async () => {
    const res = await call("GET", "/api/v1/orchestrator/events?limit=2");
    expect(res.status).toBe(200);
    const page = expectDeclaredShape("eventFeed", 200, res.text) as { Items: unknown[]; NextToken: string };
    expect(page.Items).toHaveLength(2);
    expect(page.NextToken).not.toBe("");
    const doc = JSON.parse((await call("GET", "/api/v1/openapi.json")).text) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, unknown> }> }>>;
    };
    expect(Object.keys(doc.paths["/api/v1/orchestrator/events"]!.get!.responses["200"]!.content)).toEqual([
      "application/json",
      "application/x-ndjson",
    ]);
  });

  it("alive, ready, agent node and version", async () => {
    for (const [operationId, path] of [
      ["alive", "/api/v1/agent/alive"],
      ["ready", "/api/v1/agent/ready"],
      ["agentNode", "/api/v1/agent/node"],
      ["version", "/api/v1/agent/version"],
    ] as const) {
      const res = await call("GET", path);
      expect(res.status, path).toBe(200);
      expectDeclaredShape(operationId, 200, res.text);
    }
    const ready = JSON.parse((await call("GET", "/api/v1/agent/ready")).text) as { Checks: unknown[] };
    expect(ready.Checks.length).toBeGreaterThan(0);
  });

  it("the agent's configuration: redacted, for read:agent only", async () => {
    const res = await call("GET", "/api/v1/agent/config");
    expect(res.status).toBe(200);
    const config = expectDeclaredShape("agentConfig", 200, res.text) as any;
    expect(config.API.Host).toBe("127.0.0.1");
    expect(config.Orchestrator.NodeManager.ManualApproval).toBe(true);
    expect(config.Orchestrator.Auth.Token).toBe("<redacted>");
    expect(res.text).not.toContain(TOKEN);
    const anonymous = await fetch(`${orchestrator.apiUrl}/api/v1/agent/config`);
    expect(anonymous.status).toBe(401);
  });

  it("error bodies decode as the document's Error", async () => {
    for (const [path, status] of [
      ["/api/v1/orchestrator/nodes/nobody", 404],
      ["/api/v1/orchestrator/nodes/node-", 409],
      ["/api/v1/orchestrator/nodes?limit=0", 400],
    ] as const) {
      const res = await call("GET", path);
      expect(res.status, path).toBe(status);
      const decoded = Schema.decodeUnknownEither(ErrorResponse, { onExcessProperty: "error" })(JSON.parse(res.text));
      expect(decoded._tag, path).toBe("Right");
    }
  });
});

describe("the API's page, GET /api/v1/docs", () => {
  it("is HTML with every operation of the document, linked, and no dead link", async () => {
    const res = await fetch(`${orchestrator.apiUrl}/api/v1/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    const doc = JSON.parse((await call("GET", "/api/v1/openapi.json")).text) as {
      paths: Record<string, Record<string, { operationId: string; summary: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!));
    const links = new Set([...html.matchAll(/ href="#([^"]+)"/g)].map((m) => m[1]!));
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const { path, method, op } of operations) {
      const id = `op-${op.operationId.replace(/[^A-Za-z0-9_-]/g, "-")}`;
      expect(ids, `${method} ${path}`).toContain(id);
      expect(links, `${method} ${path}`).toContain(id);
      const article = html.slice(html.indexOf(`id="${id}"`), html.indexOf("</article>", html.indexOf(`id="${id}"`)));
      expect(article, id).toContain(`<code>${path}</code>`);
      expect(article, id).toContain(op.summary.replaceAll("'", "&#39;"));
    }
    for (const name of Object.keys(doc.components.schemas)) expect(ids, name).toContain(`schema-${name}`);
    for (const link of links) expect(ids, link).toContain(link);
    expect(html).toContain('href="/api/v1/openapi.json"');
  });

  it("loads nothing from elsewhere and runs no script: its CSP allows its own style only", async () => {
    const res = await fetch(`${orchestrator.apiUrl}/api/v1/docs`);
    const html = await res.text();
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\son[a-z]+=|\sstyle=/i);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//i);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1];
    expect(style).toBeDefined();
    const hash = createHash("sha256").update(style!).digest("base64");
    expect(res.headers.get("content-security-policy")).toBe(
      `default-src 'none'; style-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("is public as the document is, with anonymous access off too", async () => {
    const app = buildApi({ ...unusedDeps, auth: { users: [], anonymousAccess: "none" } } as ApiDeps);
    try {
      for (const url of ["/api/v1/docs", "/api/v1/openapi.json"]) {
        const res = await app.inject({ method: "GET", url });
        expect(res.statusCode, url).toBe(200);
      }
      expect((await app.inject({ method: "GET", url: "/api/v1/agent/node" })).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });
});
