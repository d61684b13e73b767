import { readFileSync } from "node:fs";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { mountTmpfs, whyCannotMount, type ScratchFs } from "../support/scratch-filesystem.ts";

/**
 * An orchestrator whose DataDir is on a small tmpfs that really fills up (see
 * scratch-filesystem.ts): every write is refused as Unavailable with a retry hint, over REST and
 * over NATS, nothing is stored, and the same requests succeed once space is back.
 */
const cannotMount = whyCannotMount();
if (cannotMount) console.warn(`orchestrator disk-full tests skipped: ${cannotMount}`);

describe.skipIf(cannotMount !== undefined)("orchestrator on a full disk", () => {
  let fs: ScratchFs;
  let nats: TestNatsServer;
  let orchestrator: RunningOrchestrator;
  let nc: NatsConnection;

  const api = async (method: string, path: string, body?: unknown) => {
    const authorization = `Bearer ${readFileSync(adminApiKeyPath(fs.dir), "utf8").trim()}`;
    const res = await fetch(`${orchestrator.apiUrl}${path}`, {
      method,
      headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      body: (await res.json()) as Record<string, any>,
    };
  };
  const join = (id: string) => joinNode(nc, id, orchestrator.joinToken.token);
  const history = async (id: string) =>
    (await api("GET", `/api/v1/orchestrator/nodes/${id}/history`)).body.Items.map((e: { type: string }) => e.type);

  beforeAll(async () => {
    fs = mountTmpfs(32 * 1024 * 1024);
    nats = await TestNatsServer.start();
    orchestrator = await startOrchestrator(
      orchestratorConfig(nats.url, { DataDir: fs.dir, "Orchestrator.NodeManager.ManualApproval": true }),
      silentLogger,
    );
    nc = await connect({ servers: nats.url });
    expect((await join("node-1")).Accepted).toBe(true);
  });

  afterAll(async () => {
    fs?.free();
    await nc?.drain();
    await orchestrator?.stop();
    await nats?.stop();
    fs?.unmount();
  });

  it("answers 503 with the reason and Retry-After over REST, and Unavailable with RetryAfter over NATS; nothing is stored", async () => {
    fs.fill();
    const approve = await api("PUT", "/api/v1/orchestrator/nodes/node-1", { Action: "approve" });
    expect(approve.status).toBe(503);
    expect(approve.retryAfter).toBe("5");
    expect(approve.body).toMatchObject({
      Status: 503,
      Code: "Unavailable",
      Message: expect.stringMatching(/^event store unavailable: the disk is full \(SQLITE_FULL/),
    });

    const register = await join("node-2");
    expect(register).toEqual({
      Accepted: false,
      Code: "Unavailable",
      RetryAfter: 5,
      Reason: expect.stringMatching(/^event store unavailable: the disk is full/),
    });

    expect((await api("GET", "/api/v1/orchestrator/nodes/node-1")).body.Node.Membership).toBe("PENDING");
    expect(await history("node-1")).toEqual(["NodeRegistered", "NodeCredentialBound"]);
    expect((await api("GET", "/api/v1/orchestrator/nodes/node-2")).status).toBe(404);
  });

  it("takes the same requests once space is back", async () => {
    fs.free();
    expect((await api("PUT", "/api/v1/orchestrator/nodes/node-1", { Action: "approve" })).status).toBe(200);
    expect(await join("node-2")).toEqual({ Accepted: true, Reason: "node registered", Reconnect: false });
    expect(await history("node-1")).toEqual(["NodeRegistered", "NodeCredentialBound", "NodeApproved"]);
    expect(await history("node-2")).toEqual(["NodeRegistered", "NodeCredentialBound"]);
  });
});
