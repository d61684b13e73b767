import { readFileSync } from "node:fs";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode, nodeKey, otherKey } from "../support/join-node.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { TestNatsServer } from "../support/nats-server.ts";

// Operator controls over real HTTP, a real nats-server and a real SQLite store, under manual
// approval: every action is recorded with the authenticated operator and the reason; bad input
// is refused with a clear 400/404 and stores nothing.

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let adminKey: string;
const TOKEN = "s3cret";

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      authorization: `Bearer ${adminKey}`,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

const put = (id: string, body: unknown) => call("PUT", `/api/v1/orchestrator/nodes/${id}`, body);
const node = async (id: string) =>
  (await call("GET", `/api/v1/orchestrator/nodes/${id}`)).json?.Node as Record<string, unknown>;
const history = async (id: string) =>
  ((await call("GET", `/api/v1/orchestrator/nodes/${id}/history`)).json?.Items ?? []) as {
    type: string;
    data: Record<string, unknown>;
    metadata: Record<string, unknown>;
  }[];
const list = async (query: string) =>
  (((await call("GET", `/api/v1/orchestrator/nodes?${query}`)).json?.Nodes ?? []) as { Info: { NodeID: string } }[])
    .map((n) => n.Info.NodeID)
    .sort();

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
    expect((await joinNode(nc, id, TOKEN, computeInfo(id, { zone: "a", rack: "r1" }))).Accepted).toBe(true);
  for (const id of ["node-1", "node-2"]) expect((await put(id, { Action: "approve" })).status).toBe(200);
});

afterAll(async () => {
  await nc?.drain();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("cordon and uncordon over PUT /api/v1/orchestrator/nodes/{id}", () => {
  it("cordons with the operator and the reason recorded, shows it and filters on it", async () => {
    const res = await put("node-1", { NodeID: "node-1", Action: "cordon", Message: "disk failing" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ Success: true });
    const n = await node("node-1");
    expect(n.Cordoned).toBe(true);
    expect(n.Cordon).toMatchObject({ Reason: "disk failing", By: { type: "operator", id: "admin" } });
    expect((await node("node-2")).Cordoned).toBe(false);
    const last = (await history("node-1")).at(-1);
    expect(last).toMatchObject({
      type: "NodeCordoned",
      data: { Reason: "disk failing" },
      metadata: { actor: { type: "operator", id: "admin" }, reason: "disk failing" },
    });
    expect(await list("filter-cordoned=true")).toEqual(["node-1"]);
    expect(await list("filter-cordoned=false")).toEqual(expect.arrayContaining(["node-2"]));
    expect(await list("filter-cordoned=false")).not.toContain("node-1");
  });

  it("cordoning again stores nothing and says so", async () => {
    const before = (await history("node-1")).length;
    const res = await put("node-1", { Action: "cordon", Message: "again" });
    expect(res.json).toEqual({ Success: true, Message: "node already cordoned" });
    expect((await history("node-1")).length).toBe(before);
  });

  it("uncordons", async () => {
    expect((await put("node-1", { Action: "uncordon", Message: "disk replaced" })).status).toBe(200);
    expect((await node("node-1")).Cordoned).toBe(false);
    expect((await history("node-1")).at(-1)).toMatchObject({
      type: "NodeUncordoned",
      metadata: { reason: "disk replaced" },
    });
  });

  it("refuses an unknown node (404), an unknown action and a field the action does not take (400), storing nothing", async () => {
    const before = (await history("node-1")).length;
    expect((await put("no-such-node", { Action: "cordon" })).status).toBe(404);
    const unknown = await put("node-1", { Action: "evict" });
    expect(unknown.status).toBe(400);
    expect(unknown.json?.Message).toContain(
      'must be one of "approve", "reject", "delete", "cordon", "uncordon", "label"',
    );
    const misplaced = await put("node-1", { Action: "cordon", Labels: { zone: "b" } });
    expect(misplaced.status).toBe(400);
    expect(misplaced.json?.Message).toBe('Labels is not taken by Action "cordon"');
    expect((await history("node-1")).length).toBe(before);
  });

  it("keeps approve byte-compatible: Bacalhau's body, Bacalhau's answer", async () => {
    const res = await put("node-2", { NodeID: "node-2", Action: "reject", Message: "bye" });
    expect(res.text).toBe('{"Success":true}');
    expect((await put("node-2", { NodeID: "node-2", Action: "approve", Message: "back" })).text).toBe(
      '{"Success":true}',
    );
  });
});

describe("operator labels", () => {
  it("sets, overrides and hides labels; Info.Labels are the effective ones, ReportedLabels the node's own", async () => {
    const res = await put("node-2", {
      Action: "label",
      Labels: { zone: "b", gpu: "a100" },
      RemoveLabels: ["rack"],
      Message: "moved",
    });
    expect(res.status).toBe(200);
    const n = (await node("node-2")) as {
      Info: { Labels: Record<string, string> };
      ReportedLabels: Record<string, string>;
      OperatorLabels: unknown;
    };
    expect(n.Info.Labels).toMatchObject({ zone: "b", gpu: "a100" });
    expect(n.Info.Labels.rack).toBeUndefined();
    expect(n.ReportedLabels).toMatchObject({ zone: "a", rack: "r1" });
    expect(n.OperatorLabels).toEqual({ Set: { gpu: "a100", zone: "b" }, Removed: ["rack"] });
    expect((await history("node-2")).at(-1)).toMatchObject({
      type: "NodeLabelsSet",
      data: { Set: { zone: "b", gpu: "a100" }, Removed: ["rack"], Reset: [] },
      metadata: { actor: { type: "operator", id: "admin" }, reason: "moved" },
    });
  });

  it("the list's label filter selects on the effective labels", async () => {
    expect(await list("labels=zone%3Db")).toEqual(["node-2"]);
    expect(await list("labels=zone%3Da")).toEqual(["node-1"]);
    expect(await list("labels=rack")).toEqual(["node-1"]);
  });

  it("the node's later reports do not undo the operator's labels", async () => {
    const client = new ComputeClient(nc, "node-2");
    expect(await client.updateInfo(computeInfo("node-2", { zone: "c", rack: "r9" }))).toMatchObject({ Accepted: true });
    const n = (await node("node-2")) as {
      Info: { Labels: Record<string, string> };
      ReportedLabels: Record<string, string>;
    };
    expect(n.Info.Labels.zone).toBe("b");
    expect(n.Info.Labels.rack).toBeUndefined();
    expect(n.ReportedLabels).toMatchObject({ zone: "c", rack: "r9" });
  });

  it("a reset shows the node's own value again", async () => {
    expect((await put("node-2", { Action: "label", ResetLabels: ["zone", "rack"] })).status).toBe(200);
    const n = (await node("node-2")) as { Info: { Labels: Record<string, string> } };
    expect(n.Info.Labels).toMatchObject({ zone: "c", rack: "r9", gpu: "a100" });
  });

  it("refuses a bad key, a bad value, a contradiction and an empty change, storing nothing", async () => {
    const before = (await history("node-2")).length;
    const badKey = await put("node-2", { Action: "label", Labels: { "bad key!": "x" } });
    expect(badKey.status).toBe(400);
    expect(badKey.text).toContain("label key");
    expect((await put("node-2", { Action: "label", Labels: { zone: "no spaces" } })).status).toBe(400);
    expect((await put("node-2", { Action: "label", RemoveLabels: ["-bad"] })).status).toBe(400);
    const both = await put("node-2", { Action: "label", Labels: { zone: "d" }, RemoveLabels: ["zone"] });
    expect(both.status).toBe(400);
    expect(both.text).toContain("label zone is both set and removed");
    expect((await put("node-2", { Action: "label" })).status).toBe(400);
    expect((await history("node-2")).length).toBe(before);
  });
});

describe("pre-authorised join under manual approval", () => {
  it("a node pre-authorised (pinned to its key) before it exists joins APPROVED; another stays PENDING", async () => {
    const pre = await put("node-pre", {
      Action: "preauthorize",
      PublicKey: nodeKey("node-pre").publicKey,
      Message: "rack 7 delivery",
    });
    expect(pre.status).toBe(200);
    // Not a node yet: not listed, not found.
    expect((await call("GET", "/api/v1/orchestrator/nodes/node-pre")).status).toBe(404);
    // Its history (by its exact id) shows the pre-authorisation before it joins.
    expect((await history("node-pre")).map((e) => e.type)).toEqual(["NodePreauthorized"]);
    expect((await joinNode(nc, "node-pre", TOKEN)).Accepted).toBe(true);
    expect((await joinNode(nc, "node-other", TOKEN)).Accepted).toBe(true);
    expect((await node("node-pre")).Membership).toBe("APPROVED");
    expect((await node("node-other")).Membership).toBe("PENDING");
    const h = await history("node-pre");
    expect(h.map((e) => e.type)).toEqual(["NodePreauthorized", "NodeRegistered", "NodeCredentialBound"]);
    expect(h[0]).toMatchObject({
      data: { PublicKey: nodeKey("node-pre").publicKey, Reason: "rack 7 delivery" },
      metadata: { actor: { type: "operator", id: "admin" } },
    });
  });

  it("a node joining with another key than the pre-authorised one stays PENDING", async () => {
    expect((await put("node-pinned", { Action: "preauthorize", PublicKey: otherKey().publicKey })).status).toBe(200);
    expect((await joinNode(nc, "node-pinned", TOKEN)).Accepted).toBe(true);
    expect((await node("node-pinned")).Membership).toBe("PENDING");
  });

  it("a revoked pre-authorisation lets nothing in", async () => {
    expect((await put("node-revoked", { Action: "preauthorize" })).status).toBe(200);
    expect((await put("node-revoked", { Action: "revoke-preauthorization", Message: "order cancelled" })).status).toBe(
      200,
    );
    expect((await joinNode(nc, "node-revoked", TOKEN)).Accepted).toBe(true);
    expect((await node("node-revoked")).Membership).toBe("PENDING");
  });

  it("refuses a registered node (409), a bad id or key (400), revoking nothing (404)", async () => {
    expect((await put("node-1", { Action: "preauthorize" })).status).toBe(409);
    expect((await put("bad.id", { Action: "preauthorize" })).status).toBe(400);
    const badKey = await put("node-x", { Action: "preauthorize", PublicKey: "not-a-key" });
    expect(badKey.status).toBe(400);
    expect(badKey.text).toContain("NATS user nkey");
    expect((await put("node-never", { Action: "revoke-preauthorization" })).status).toBe(404);
    expect((await call("GET", "/api/v1/orchestrator/nodes/node-x/history")).status).toBe(404);
  });
});
