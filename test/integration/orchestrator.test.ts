import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { decode, encode } from "../../src/transport/codec.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { joinProof, signJoin } from "../../src/transport/join-proof.ts";
import { ProtocolResponse } from "../../src/transport/messages.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode, nodeKey } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { storedEvents } from "../support/stored-events.ts";

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let config: ShoalConfig;
let adminKey: string;
const TOKEN = "s3cret";

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      authorization: `Bearer ${adminKey}`,
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, any>) : undefined,
  };
}

async function rawRequest(subject: string, payload: Uint8Array) {
  const reply = await nc.request(subject, payload, { timeout: 3000 });
  return decode(ProtocolResponse, reply.data);
}

const eventCount = async (): Promise<number> => (await storedEvents(config.DataDir)).length;

beforeAll(async () => {
  nats = await TestNatsServer.start();
  config = orchestratorConfig(nats.url, {
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  adminKey = readFileSync(adminApiKeyPath(config.DataDir), "utf8").trim();
  nc = await connect({ servers: nats.url });
  for (const [id, labels] of [
    ["node-1", { zone: "a" }],
    ["node-2", { zone: "b" }],
    ["node-3", { zone: "a", gpu: "true" }],
  ] as const) {
    const r = await joinNode(nc, id, TOKEN, computeInfo(id, labels));
    // An open NATS enforces nothing per node: the node keeps its connection (Reconnect: false).
    expect(r).toEqual({ Accepted: true, Reason: "node registered", Reconnect: false });
  }
});

afterAll(async () => {
  await nc?.drain();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("compute protocol", () => {
  it("answers a repeated registration without writing anything", async () => {
    const before = await eventCount();
    expect(await joinNode(nc, "node-1", TOKEN, computeInfo("node-1", { zone: "a" }))).toEqual({
      Accepted: true,
      Reason: "node already registered",
      Reconnect: false,
    });
    expect(await eventCount()).toBe(before);
  });

  it("refuses bad messages with a clear reason and stores nothing", async () => {
    const before = await eventCount();
    const messageId = randomUUID();
    const key = nodeKey("node-9");
    const signature = signJoin(key, "node-9", messageId);
    const valid = {
      MessageID: messageId,
      Info: computeInfo("node-9"),
      PublicKey: key.publicKey,
      Proof: joinProof(TOKEN, "node-9", key.publicKey, messageId),
      Signature: signature,
    };
    // node-1's key is public (it is in node-1's history): a token holder knows it, but cannot sign with it.
    const victim = nodeKey("node-1").publicKey;
    const cases: [string, Uint8Array, string, RegExp][] = [
      ["garbage", new TextEncoder().encode("\xc1 not msgpack"), "BadRequest", /invalid message/],
      [
        "wrong token",
        encode({ ...valid, Proof: joinProof("nope", "node-9", key.publicKey, messageId) }),
        "Unauthorized",
        /join token/,
      ],
      ["proof for another key", encode({ ...valid, PublicKey: victim }), "Unauthorized", /join token/],
      [
        "another node's public key, not its secret",
        encode({ ...valid, PublicKey: victim, Proof: joinProof(TOKEN, "node-9", victim, messageId) }),
        "Unauthorized",
        /signature was not made with the key/,
      ],
      [
        "signed for another message",
        encode({ ...valid, Signature: signJoin(key, "node-9", randomUUID()) }),
        "Unauthorized",
        /signature/,
      ],
      [
        "no proof",
        encode({ MessageID: messageId, Info: computeInfo("node-9"), PublicKey: key.publicKey, Signature: signature }),
        "BadRequest",
        /Proof/,
      ],
      [
        "no signature",
        encode({ MessageID: messageId, Info: computeInfo("node-9"), PublicKey: key.publicKey, Proof: valid.Proof }),
        "BadRequest",
        /Signature/,
      ],
      ["the token itself", encode({ ...valid, Token: TOKEN }), "BadRequest", /Token/],
      ["not a key", encode({ ...valid, PublicKey: "SUAXYZ" }), "BadRequest", /nkey/],
      ["unknown field", encode({ ...valid, Extra: 1 }), "BadRequest", /Extra/],
      ["wrong type", encode({ ...valid, Info: { ...valid.Info, Labels: "x" } }), "BadRequest", /Labels/],
      ["bad node id", encode({ ...valid, Info: { ...valid.Info, NodeID: "a.b" } }), "BadRequest", /node id/],
      ["oversized", encode({ ...valid, Info: { ...valid.Info, Hostname: "x".repeat(70_000) } }), "BadRequest", /limit/],
      [
        "requester",
        encode({ ...valid, Info: { ...valid.Info, NodeType: "Requester" } }),
        "BadRequest",
        /not a compute node/,
      ],
    ];
    for (const [name, payload, code, reason] of cases) {
      const r = await rawRequest("shoal.join.node-9", payload);
      expect(r.Accepted, name).toBe(false);
      expect(r.Code, name).toBe(code);
      expect(r.Reason, name).toMatch(reason);
    }
    const spoof = await rawRequest("shoal.join.node-9", encode({ ...valid, Info: computeInfo("node-1") }));
    expect(spoof).toMatchObject({
      Accepted: false,
      Code: "BadRequest",
      Reason: "subject is for node node-9 but the message is from node-1",
    });
    expect(await eventCount()).toBe(before);
  });

  it("refuses request-style heartbeats (older agents) of unregistered nodes as not registered", async () => {
    expect(await new ComputeClient(nc, "ghost").heartbeatRequest()).toEqual({
      Accepted: false,
      Code: "NotFound",
      Reason: "node not registered: ghost",
    });
  });

  it("keeps resource reports in memory and shows them in the API", async () => {
    const client = new ComputeClient(nc, "node-2");
    const before = await eventCount();
    expect(
      await client.updateResources({
        AvailableCapacity: { CPU: 3, Memory: 1024 },
        QueueUsedCapacity: {},
        RunningExecutions: 1,
        EnqueuedExecutions: 0,
      }),
    ).toEqual({ Accepted: true });
    expect(await eventCount()).toBe(before);
    const res = await api("GET", "/api/v1/orchestrator/nodes/node-2");
    expect(res.body!.Node.Info.ComputeNodeInfo).toMatchObject({
      AvailableCapacity: { CPU: 3, Memory: 1024 },
      RunningExecutions: 1,
      MaxCapacity: { CPU: 4 },
    });
    // The list keeps each node's capacity text until its next report: a new report must show at once.
    const listed = async () => {
      const page = await api("GET", "/api/v1/orchestrator/nodes");
      return (page.body!.Nodes as { Info: { NodeID: string; ComputeNodeInfo?: unknown } }[]).find(
        (n) => n.Info.NodeID === "node-2",
      )!.Info.ComputeNodeInfo;
    };
    expect(await listed()).toMatchObject({ AvailableCapacity: { CPU: 3, Memory: 1024 }, RunningExecutions: 1 });
    await client.updateResources({
      AvailableCapacity: { CPU: 1 },
      QueueUsedCapacity: { CPU: 2 },
      RunningExecutions: 3,
      EnqueuedExecutions: 4,
    });
    expect(await listed()).toMatchObject({
      AvailableCapacity: { CPU: 1 },
      QueueCapacity: { CPU: 2 },
      RunningExecutions: 3,
      EnqueuedExecutions: 4,
    });
    await client.updateResources({
      AvailableCapacity: { CPU: 1 },
      QueueUsedCapacity: { CPU: 2 },
      RunningExecutions: 3,
      EnqueuedExecutions: 4,
    });
    expect(await listed()).toMatchObject({
      AvailableCapacity: { CPU: 1 },
      QueueCapacity: { CPU: 2 },
      RunningExecutions: 3,
      EnqueuedExecutions: 4,
    });
  });

  it("stores a changed info report as NodeInfoUpdated, an unchanged one not at all", async () => {
    const client = new ComputeClient(nc, "node-3");
    const before = await eventCount();
    await client.updateInfo(computeInfo("node-3", { zone: "a", gpu: "true" }));
    expect(await eventCount()).toBe(before);
    await client.updateInfo(computeInfo("node-3", { zone: "a", gpu: "true", rack: "r7" }));
    expect(await eventCount()).toBe(before + 1);
  });
});

describe("REST API", () => {
  it("lists the orchestrator and the compute nodes with Bacalhau's shape", async () => {
    const res = await api("GET", "/api/v1/orchestrator/nodes");
    expect(res.status).toBe(200);
    expect(res.body!.NextToken).toBe("");
    const rows = res.body!.Nodes.map((n: any) => [
      n.Info.NodeID,
      n.Info.NodeType,
      n.Membership,
      n.Health,
      n.ConnectionState.Status,
    ]);
    expect(rows).toEqual([
      ["node-0", "Requester", "APPROVED", "HEALTHY", "CONNECTED"],
      ["node-1", "Compute", "PENDING", "HEALTHY", "CONNECTED"],
      ["node-2", "Compute", "PENDING", "HEALTHY", "CONNECTED"],
      ["node-3", "Compute", "PENDING", "HEALTHY", "CONNECTED"],
    ]);
    expect(res.body!.Nodes[1]).toMatchObject({ Connection: "CONNECTED", Revision: 1, Info: { Labels: { zone: "a" } } });
    // The list splices each node's kept JSON (live capacity and heartbeat included); a node's
    // own GET still builds the object for Fastify to serialise: both say the same.
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    for (const node of res.body!.Nodes)
      expect(node).toEqual((await api("GET", `/api/v1/orchestrator/nodes/${node.Info.NodeID}`)).body!.Node);
  });

  it("filters by approval, status and label selector, and sorts", async () => {
    const ids = async (q: string) =>
      (await api("GET", `/api/v1/orchestrator/nodes?${q}`)).body!.Nodes.map((n: any) => n.Info.NodeID);
    expect(await ids("filter-approval=approved")).toEqual(["node-0"]);
    expect(await ids("filter-approval=PENDING&labels=zone%3Da")).toEqual(["node-1", "node-3"]);
    expect(await ids("labels=zone%20in%20(a,b)&labels=!gpu")).toEqual(["node-1", "node-2"]);
    expect(await ids("filter-status=unhealthy")).toEqual([]);
    expect(await ids("filter-status=CONNECTED&reverse=true")).toEqual(["node-3", "node-2", "node-1", "node-0"]);
    expect(await ids("order_by=type")).toEqual(["node-0", "node-1", "node-2", "node-3"]);
  });

  it("pages with a working cursor", async () => {
    const seen: string[] = [];
    let token = "";
    do {
      const res = await api("GET", `/api/v1/orchestrator/nodes?limit=3${token ? `&next_token=${token}` : ""}`);
      seen.push(...res.body!.Nodes.map((n: any) => n.Info.NodeID));
      token = res.body!.NextToken;
    } while (token);
    expect(seen).toEqual(["node-0", "node-1", "node-2", "node-3"]);
  });

  it("rejects bad queries with 400 and a JSON error body", async () => {
    for (const q of [
      "order_by=color",
      "limit=0",
      "limit=abc",
      "filter-status=SLEEPY",
      "labels=zone%20in%20(a",
      "next_token=%%%",
      "reverse=maybe",
    ]) {
      const res = await api("GET", `/api/v1/orchestrator/nodes?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body, q).toMatchObject({ Status: 400, Code: "BadRequest", Component: "orchestrator" });
      expect(typeof res.body!.RequestID).toBe("string");
    }
  });

  it("describes a node by unique prefix with its revision as ETag; 404 and 409 otherwise", async () => {
    const res = await api("GET", "/api/v1/orchestrator/nodes/node-0");
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe(`W/"${res.body!.Node.Revision}"`);
    expect((await api("GET", "/api/v1/orchestrator/nodes/nope")).status).toBe(404);
    const ambiguous = await api("GET", "/api/v1/orchestrator/nodes/node");
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body).toMatchObject({ Code: "MultipleNodesFound", Hint: "Use a more specific node ID prefix" });
  });

  it("refuses bad PUT bodies with 400/413 and changes nothing", async () => {
    const before = await eventCount();
    const path = "/api/v1/orchestrator/nodes/node-1";
    const cases: [unknown, number, RegExp][] = [
      [
        { Action: "promote" },
        400,
        /^invalid request body: Action: must be one of "approve", "reject", "delete", "cordon", "uncordon", "label", "preauthorize", "revoke-preauthorization", "drain", "undrain"$/,
      ],
      [{}, 400, /Action/],
      [{ Action: "approve", Colour: "red" }, 400, /Colour/],
      [{ Action: 5 }, 400, /Action/],
      [{ Action: "approve", Message: 7 }, 400, /Message/],
      [{ Action: "reject", NodeID: "node-2" }, 400, /^the body names node node-2 but the path names node-1$/],
      ["{not json", 400, /JSON/i],
      [JSON.stringify({ Action: "approve", Message: "x".repeat(100_000) }), 413, /too large/],
    ];
    for (const [body, status, message] of cases) {
      const res = await api("PUT", path, body);
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(status);
      expect(res.body!.Message).toMatch(message);
    }
    const text = await fetch(`${orchestrator.apiUrl}${path}`, {
      method: "PUT",
      headers: { "content-type": "text/plain", authorization: `Bearer ${adminKey}` },
      body: "approve",
    });
    expect(text.status).toBe(415);
    expect(await eventCount()).toBe(before);
  });

  it("approves, rejects with a message and deletes, honouring If-Match", async () => {
    expect(
      (await api("PUT", "/api/v1/orchestrator/nodes/node-1", { Action: "approve" }, { "if-match": '"5"' })).status,
    ).toBe(412);
    // node-1's stream: NodeRegistered (0), NodeCredentialBound (1).
    const approve = await api("PUT", "/api/v1/orchestrator/nodes/node-1", { Action: "approve" }, { "if-match": '"1"' });
    expect(approve).toMatchObject({ status: 200, body: { Success: true } });
    expect(approve.headers.get("etag")).toBe('W/"2"');
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1")).body!.Node.Membership).toBe("APPROVED");
    const again = await api("PUT", "/api/v1/orchestrator/nodes/node-1", { Action: "approve" });
    expect(again).toMatchObject({ status: 409, body: { Code: "Conflict", Message: "node node-1 already approved" } });

    expect(
      (await api("PUT", "/api/v1/orchestrator/nodes/node-3", { Action: "reject", Message: "malicious node?" })).status,
    ).toBe(200);
    expect((await api("PUT", "/api/v1/orchestrator/nodes/node-3", { Action: "reject" })).status).toBe(409);
    expect((await api("PUT", "/api/v1/orchestrator/nodes/node-2", { Action: "delete" })).status).toBe(200);
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-2")).status).toBe(404);
    expect((await api("PUT", "/api/v1/orchestrator/nodes/node-0", { Action: "reject" })).status).toBe(409);

    const reg = await joinNode(nc, "node-3", TOKEN);
    expect(reg).toEqual({ Accepted: false, Code: "Forbidden", Reason: "node has been rejected" });
  });

  it("serves every event of a node, deleted ones too, paginated", async () => {
    const page1 = await api("GET", "/api/v1/orchestrator/nodes/node-1/history?limit=1");
    expect(page1.body!.Items.map((e: any) => e.type)).toEqual(["NodeRegistered"]);
    const page2 = await api(
      "GET",
      `/api/v1/orchestrator/nodes/node-1/history?limit=2&next_token=${page1.body!.NextToken}`,
    );
    expect(page2.body!.Items.map((e: any) => e.type)).toEqual(["NodeCredentialBound", "NodeApproved"]);
    expect(page2.body!.Items[0]).toMatchObject({
      data: { PublicKey: nodeKey("node-1").publicKey, Reinstated: false },
      metadata: { actor: { type: "node", id: "node-1" } },
    });
    expect(page2.body!.Items[1].metadata).toMatchObject({ actor: { type: "operator", id: "admin" } });
    const deleted = await api("GET", "/api/v1/orchestrator/nodes/node-2/history");
    expect(deleted.body!.Items.map((e: any) => e.type)).toEqual([
      "NodeRegistered",
      "NodeCredentialBound",
      "NodeCredentialRevoked",
      "NodeDeleted",
    ]);
    const rejected = await api("GET", "/api/v1/orchestrator/nodes/node-3/history");
    expect(rejected.body!.Items.slice(-2)).toMatchObject([
      { type: "NodeRejected", stream: "node-node-3", metadata: { reason: "malicious node?" } },
      { type: "NodeCredentialRevoked", data: { PublicKey: nodeKey("node-3").publicKey, Reason: "rejected" } },
    ]);
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1/history?next_token=x")).status).toBe(400);
  });

  it("serves the agent endpoints, OpenAPI and JSON 404s", async () => {
    expect((await api("GET", "/api/v1/agent/alive")).body).toEqual({ Status: "OK" });
    expect((await api("GET", "/api/v1/agent/node")).body).toMatchObject({ NodeID: "node-0", NodeType: "Requester" });
    expect((await api("GET", "/api/v1/agent/version")).body).toMatchObject({
      GitVersion: expect.stringMatching(/^v\d/),
    });
    const doc = (await api("GET", "/api/v1/openapi.json")).body!;
    expect(doc.openapi).toBe("3.0.3");
    expect(Object.keys(doc.paths)).toContain("/api/v1/orchestrator/nodes/{id}/history");
    // Bacalhau's three, then Shoal's operator controls (docs/nodes.md).
    expect(doc.components.schemas.PutNodeRequest.properties.Action.enum).toEqual([
      "approve",
      "reject",
      "delete",
      "cordon",
      "uncordon",
      "label",
      "preauthorize",
      "revoke-preauthorization",
      "drain",
      "undrain",
    ]);
    expect((await api("GET", "/api/v1/nothing")).body).toMatchObject({ Status: 404, Code: "NotFound" });
  });
});

describe("cluster events on NATS", () => {
  it("publishes every stored node event to JetStream in store order, with Nats-Msg-Id = event id", async () => {
    const stored = (await storedEvents(config.DataDir)).filter((e) => e.stream.startsWith("node-"));
    await orchestrator.publisher.waitFor(stored.at(-1)!.position);

    const js = nc.jetstream();
    const consumer = await js.consumers.get("SHOAL_EVENTS");
    const received: { subject: string; msgId: string | undefined; body: any }[] = [];
    const messages = await consumer.fetch({ max_messages: stored.length, expires: 5000 });
    for await (const m of messages)
      received.push({ subject: m.subject, msgId: m.headers?.get("Nats-Msg-Id"), body: m.json() });
    expect(received.map((r) => r.body.position)).toEqual(stored.map((e) => e.position));
    const first = received[0]!;
    expect(first.subject).toBe(`shoal.events.node.${stored[0]!.stream.slice(5)}.${stored[0]!.type}`);
    expect(first.msgId).toBe(stored[0]!.id);
    expect(Object.keys(first.body).sort()).toEqual([
      "data",
      "id",
      "metadata",
      "position",
      "revision",
      "stream",
      "time",
      "type",
    ]);
  });
});
