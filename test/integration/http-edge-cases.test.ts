import { readFileSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { storedEvents } from "../support/stored-events.ts";

/** The HTTP edge cases of issue 5's probe, over real HTTP against a real orchestrator. */

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let config: ShoalConfig;

const LONG_ID = `n${"x".repeat(126)}9`; // 128 characters, the protocol's maximum
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function api(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      authorization: `Bearer ${readFileSync(adminApiKeyPath(config.DataDir), "utf8").trim()}`,
      ...init.headers,
    },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    contentType: res.headers.get("content-type"),
    body: text ? (JSON.parse(text) as Record<string, any>) : undefined,
  };
}

/** Shoal's error body (Bacalhau's APIError shape) with the given status and code. */
function expectErrorBody(
  res: { status: number; contentType: string | null; body?: Record<string, any> },
  status: number,
  code: string,
) {
  expect(res.status).toBe(status);
  expect(res.contentType).toMatch(/^application\/json/);
  expect(res.body).toMatchObject({ Status: status, Code: code, Component: "orchestrator" });
  expect(typeof res.body!.Message).toBe("string");
  expect(typeof res.body!.RequestID).toBe("string");
}

/** Sends raw bytes and reads the whole response (the server closes the connection after it). */
function rawHttp(bytes: string): Promise<{ status: number; contentType: string | null; body?: Record<string, any> }> {
  const { hostname, port } = new URL(orchestrator.apiUrl);
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(port), hostname, () => socket.write(bytes));
    let data = "";
    socket.on("data", (d: Buffer) => (data += d.toString()));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = data.split("\r\n\r\n");
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
        contentType: /^content-type: (.*)$/im.exec(head)?.[1]?.trim() ?? null,
        body: body ? (JSON.parse(body) as Record<string, any>) : undefined,
      });
    });
  });
}

const eventCount = async (): Promise<number> => (await storedEvents(config.DataDir)).length;

beforeAll(async () => {
  nats = await TestNatsServer.start();
  config = orchestratorConfig(nats.url, { "Orchestrator.NodeManager.ManualApproval": true });
  orchestrator = await startOrchestrator(config, silentLogger);
  nc = await connect({ servers: nats.url });
  for (const id of [LONG_ID, "node-1"]) {
    const joined = await joinNode(nc, id, orchestrator.joinToken.token);
    expect(joined).toMatchObject({ Accepted: true });
  }
});

afterAll(async () => {
  await nc?.drain();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("node ids up to the protocol's 128 characters", () => {
  it("work on GET, PUT and history, with a weak ETag that If-Match accepts", async () => {
    const path = `/api/v1/orchestrator/nodes/${LONG_ID}`;
    const got = await api("GET", path);
    expect(got.status).toBe(200);
    expect(got.body!.Node.Info.NodeID).toBe(LONG_ID);
    // NodeRegistered (0) and NodeCredentialBound (1).
    expect(got.headers.get("etag")).toBe('W/"1"');

    expect((await api("PUT", path, { body: '{"Action":"approve"}', headers: { "if-match": 'W/"7"' } })).status).toBe(
      412,
    );
    const put = await api("PUT", path, {
      body: '{"Action":"approve"}',
      headers: { "if-match": got.headers.get("etag")! },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get("etag")).toBe('W/"2"');
    expect((await api("GET", path)).headers.get("etag")).toBe('W/"2"');

    const history = await api("GET", `${path}/history`);
    expect(history.status).toBe(200);
    expect(history.body!.Items.map((e: any) => e.type)).toEqual([
      "NodeRegistered",
      "NodeCredentialBound",
      "NodeApproved",
    ]);
    // A long unique prefix resolves as a short one does.
    expect((await api("GET", `/api/v1/orchestrator/nodes/${LONG_ID.slice(0, 120)}`)).body!.Node.Info.NodeID).toBe(
      LONG_ID,
    );
  });

  it("a longer id is not found; a path segment over 256 characters is 414, both as Shoal's error body", async () => {
    expectErrorBody(await api("GET", `/api/v1/orchestrator/nodes/${LONG_ID}x`), 404, "NotFound");
    expectErrorBody(await api("GET", `/api/v1/orchestrator/nodes/${"y".repeat(300)}/history`), 414, "URITooLong");
    expectErrorBody(
      await api("PUT", `/api/v1/orchestrator/nodes/${"y".repeat(300)}`, { body: '{"Action":"approve"}' }),
      414,
      "URITooLong",
    );
  });
});

describe("JSON bodies", () => {
  it("refuse duplicate keys, deep nesting and prototype keys with 400, and change nothing", async () => {
    const before = await eventCount();
    const path = "/api/v1/orchestrator/nodes/node-1";
    const bodies: [string, RegExp][] = [
      ['{"Action":"approve","Action":"reject"}', /key "Action" twice/],
      ['{"Action":"approve","\\u0041ction":"delete"}', /key "Action" twice/],
      ['{"Action":"approve","Message":"m","NodeID":"a","NodeID":"b"}', /key "NodeID" twice/],
      [`${"[".repeat(30_000)}${"]".repeat(30_000)}`, /nested deeper than 64/],
      [`{"Action":"approve","Message":${"[".repeat(29_000)}${"]".repeat(29_000)}}`, /nested deeper than 64/],
      ['{"Action":"approve","__proto__":{"x":1}}', /__proto__/],
      ["{not json", /not valid JSON/],
      ["", /empty/],
    ];
    for (const [body, message] of bodies) {
      const res = await api("PUT", path, { body });
      expectErrorBody(res, 400, "BadRequest");
      expect(res.body!.Message, body.slice(0, 40)).toMatch(message);
    }
    expect(await eventCount()).toBe(before);
    // The server is unharmed.
    expect((await api("GET", path)).body!.Node.Membership).toBe("PENDING");
  });

  it("refuse other content types with 415 and an oversized body with 413, as Shoal's error body", async () => {
    const path = "/api/v1/orchestrator/nodes/node-1";
    expectErrorBody(
      await api("PUT", path, { body: "approve", headers: { "content-type": "text/plain" } }),
      415,
      "UnsupportedMediaType",
    );
    expectErrorBody(
      await api("PUT", path, { body: JSON.stringify({ Action: "approve", Message: "x".repeat(70_000) }) }),
      413,
      "PayloadTooLarge",
    );
  });
});

describe("numbers in query strings", () => {
  it("are plain decimal digits on every route that takes one", async () => {
    const routes = ["/api/v1/orchestrator/nodes", "/api/v1/orchestrator/nodes/node-1/history"];
    for (const route of routes) {
      expect((await api("GET", `${route}?limit=2`)).status, route).toBe(200);
      for (const limit of ["0x10", "1e2", "%205", "+5", "%2B5", "5.0", "-1", "", "0"]) {
        expectErrorBody(await api("GET", `${route}?limit=${limit}`), 400, "BadRequest");
      }
    }
  });
});

describe("errors before a route is found use Shoal's error body", () => {
  it("bad URL encoding is 400", async () => {
    expectErrorBody(await api("GET", "/api/v1/orchestrator/nodes/%E0%A4%A"), 400, "BadRequest");
  });

  it("a request line and headers over Node's 16 KiB limit are 431", async () => {
    expectErrorBody(
      await api("GET", `/api/v1/orchestrator/nodes?labels=${"a".repeat(20_000)}`),
      431,
      "RequestHeaderFieldsTooLarge",
    );
  });

  it("a malformed HTTP request is 400", async () => {
    const res = await rawHttp("GET /api/v1/agent/alive HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n");
    expectErrorBody(res, 400, "BadRequest");
  });

  it("an unknown route is 404", async () => {
    expectErrorBody(await api("GET", "/api/v2/anything"), 404, "NotFound");
  });
});

describe("client-chosen request ids", () => {
  it("are used when sane and replaced by a generated one otherwise", async () => {
    const idOf = async (header: string) =>
      (await api("GET", "/api/v1/nope", { headers: { "x-request-id": header } })).body!.RequestID as string;
    expect(await idOf("trace-01HZX.42:7")).toBe("trace-01HZX.42:7");
    expect(await idOf("a".repeat(128))).toBe("a".repeat(128));
    for (const bad of ["a".repeat(129), "has spaces", "<script>", "x".repeat(10_000)])
      expect(await idOf(bad)).toMatch(UUID);
  });

  it("become the correlation id of the events a request causes only when sane", async () => {
    const reject = await api("PUT", "/api/v1/orchestrator/nodes/node-1", {
      body: '{"Action":"reject"}',
      headers: { "x-request-id": "z".repeat(500) },
    });
    expect(reject.status).toBe(200);
    const approve = await api("PUT", "/api/v1/orchestrator/nodes/node-1", {
      body: '{"Action":"approve"}',
      headers: { "x-request-id": "req-42" },
    });
    expect(approve.status).toBe(200);
    const items = (await api("GET", "/api/v1/orchestrator/nodes/node-1/history")).body!.Items as any[];
    // Each action appends two events (the key's revocation and reinstatement ride along), sharing the request's id.
    expect(items.slice(-4)).toMatchObject([
      { type: "NodeRejected", metadata: { correlationId: expect.stringMatching(UUID) } },
      { type: "NodeCredentialRevoked", metadata: { correlationId: items.at(-4).metadata.correlationId } },
      { type: "NodeApproved", metadata: { correlationId: "req-42" } },
      { type: "NodeCredentialBound", metadata: { correlationId: "req-42" } },
    ]);
  });
});
