import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Packr } from "msgpackr";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { nodeStateSnapshotPath } from "../../src/snapshots/node-state-snapshot-file.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";

const TOKEN = "s3cret";
let nats: TestNatsServer;
let nc: NatsConnection;
let base: ShoalConfig;
let snapshotPath: string;

/** Restarts never judge silence within the test: a restart must not make any node flap. */
const calm = (): ShoalConfig => ({
  ...base,
  "Orchestrator.NodeManager.DisconnectTimeout": 600_000,
  "Orchestrator.NodeManager.UnknownTimeout": 1_200_000,
});

async function call(apiUrl: string, method: string, path: string, body?: unknown) {
  const adminKey = readFileSync(adminApiKeyPath(base.DataDir), "utf8").trim();
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // A request's own id differs on every call: not part of the state.
  const { RequestID: _requestId, ...answer } = (await res.json()) as Record<string, any>;
  return { status: res.status, etag: res.headers.get("etag"), body: answer };
}

/**
 * The orchestrator's own node (node-0): every start and clean stop writes its health (orchestrator node-0 started,
 * stopped), so it is the one node whose state moves from one restart to the next.
 */
const SELF = "node-0";

/** What a client can see of every compute node: the list, each node with its ETag, and each history. */
async function observe(apiUrl: string) {
  const all = await call(apiUrl, "GET", "/api/v1/orchestrator/nodes?limit=1000");
  const Nodes = (all.body.Nodes as { Info: { NodeID: string } }[]).filter((n) => n.Info.NodeID !== SELF);
  const list = { ...all, body: { ...all.body, Nodes } };
  const ids = Array.from({ length: 12 }, (_, i) => `node-${i + 1}`);
  const nodes: Record<string, unknown> = {};
  for (const id of ids) {
    const node = await call(apiUrl, "GET", `/api/v1/orchestrator/nodes/${id}`);
    const history = await call(apiUrl, "GET", `/api/v1/orchestrator/nodes/${id}/history`);
    nodes[id] = { status: node.status, etag: node.etag, node: node.body, history: history.body };
  }
  return { list: list.body, nodes };
}

/** Starts on calm settings, observes, stops cleanly; returns what was seen and what start-up logged. */
async function restartAndObserve(config: ShoalConfig = calm()) {
  const { logger, records } = capturedLogger();
  const orchestrator = await startOrchestrator(config, logger);
  const written = async () => (await storedEvents(base.DataDir)).filter((e) => e.stream !== `node-${SELF}`).length;
  const before = await written();
  try {
    const seen = await observe(orchestrator.apiUrl);
    return { seen, logs: records, writtenMeanwhile: (await written()) - before };
  } finally {
    await orchestrator.stop();
  }
}

const startedFrom = (logs: readonly { msg?: string }[]) =>
  logs.some((r) => r.msg === "starting from the node-state snapshot")
    ? "snapshot"
    : logs.some((r) => r.msg?.startsWith("no usable node-state snapshot"))
      ? "replay"
      : "?";

const replayReason = (logs: readonly Record<string, unknown>[]) =>
  logs.find((r) => r.msg === "no usable node-state snapshot: replaying every node stream")?.reason;

beforeAll(async () => {
  nats = await TestNatsServer.start();
  nc = await connect({ servers: nats.url });
  base = orchestratorConfig(nats.url, {
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
  });
  snapshotPath = nodeStateSnapshotPath(base.DataDir);

  // A history worth snapshotting: approvals, a rejection, nodes gone UNHEALTHY (and one UNKNOWN),
  // a deleted node, a deleted node that registered again, and operator controls.
  const first = await startOrchestrator(
    {
      ...base,
      "Orchestrator.NodeManager.DisconnectTimeout": 1_000,
      "Orchestrator.NodeManager.UnknownTimeout": 600_000,
      "Orchestrator.NodeManager.Overrides": [{ NodeIDs: ["node-8"], DisconnectTimeout: 500, UnknownTimeout: 1_000 }],
    },
    silentLogger,
  );
  try {
    for (let i = 1; i <= 10; i++)
      expect(
        (await joinNode(nc, `node-${i}`, TOKEN, computeInfo(`node-${i}`, { zone: i % 2 ? "a" : "b" }))).Accepted,
      ).toBe(true);
    for (const id of ["node-1", "node-2", "node-3", "node-4", "node-8"])
      expect((await call(first.apiUrl, "PUT", `/api/v1/orchestrator/nodes/${id}`, { Action: "approve" })).status).toBe(
        200,
      );
    expect((await call(first.apiUrl, "PUT", "/api/v1/orchestrator/nodes/node-5", { Action: "reject" })).status).toBe(
      200,
    );
    expect((await call(first.apiUrl, "PUT", "/api/v1/orchestrator/nodes/node-6", { Action: "delete" })).status).toBe(
      200,
    );
    expect((await call(first.apiUrl, "PUT", "/api/v1/orchestrator/nodes/node-7", { Action: "delete" })).status).toBe(
      200,
    );
    expect((await joinNode(nc, "node-7", TOKEN, computeInfo("node-7", { zone: "c" }))).Accepted).toBe(true);
    // Operator controls: a cordon, operator labels over the node's own, a pre-authorisation of a node that never joins.
    const put = (id: string, body: unknown) => call(first.apiUrl, "PUT", `/api/v1/orchestrator/nodes/${id}`, body);
    expect((await put("node-1", { Action: "cordon", Message: "disk check" })).status).toBe(200);
    expect(
      (await put("node-2", { Action: "label", Labels: { zone: "z", gpu: "yes" }, RemoveLabels: ["Architecture"] }))
        .status,
    ).toBe(200);
    expect((await put("node-12", { Action: "preauthorize", Message: "on its way" })).status).toBe(200);
    await waitFor(
      async () =>
        (await call(first.apiUrl, "GET", "/api/v1/orchestrator/nodes/node-8")).body.Node?.Health === "UNKNOWN",
      15_000,
      () => "node-8 UNKNOWN",
    );
  } finally {
    await first.stop();
  }
}, 60_000);

afterAll(async () => {
  await nc?.drain();
  await nats?.stop();
});

describe("node-state snapshot", () => {
  it("is written on a clean stop, and a restart from it serves exactly what a full replay serves", async () => {
    expect(existsSync(snapshotPath)).toBe(true);
    const fromSnapshot = await restartAndObserve();
    expect(startedFrom(fromSnapshot.logs)).toBe("snapshot");
    rmSync(snapshotPath);
    const replayed = await restartAndObserve();
    expect(startedFrom(replayed.logs)).toBe("replay");
    expect(replayReason(replayed.logs)).toBe("no snapshot yet");

    expect(fromSnapshot.seen).toEqual(replayed.seen);
    // What the comparison covers: deleted, re-registered, rejected, unhealthy and unknown nodes.
    const list = fromSnapshot.seen.list.Nodes as { Info: { NodeID: string }; Membership: string; Health: string }[];
    const byId = new Map(list.map((n) => [n.Info.NodeID, n]));
    expect(byId.has("node-6")).toBe(false);
    expect(byId.get("node-7")?.Info).toMatchObject({ Labels: { zone: "c" } });
    expect(byId.get("node-5")?.Membership).toBe("REJECTED");
    expect(byId.get("node-8")?.Health).toBe("UNKNOWN");
    expect(byId.get("node-1")?.Health).toBe("UNHEALTHY");
    expect((fromSnapshot.seen.nodes["node-6"] as { status: number }).status).toBe(404);
    // No node flapped: neither restart wrote a health change (nor anything else).
    expect(fromSnapshot.writtenMeanwhile).toBe(0);
    expect(replayed.writtenMeanwhile).toBe(0);
  }, 60_000);

  it("applies what was stored after an older snapshot (as after a kill -9 between two snapshots)", async () => {
    // The replay above left a snapshot at the head: keep it as the old one.
    expect(existsSync(snapshotPath)).toBe(true);
    const old = `${snapshotPath}.old`;
    copyFileSync(snapshotPath, old);
    const second = await startOrchestrator(calm(), silentLogger);
    try {
      expect((await joinNode(nc, "node-11", TOKEN)).Accepted).toBe(true);
      expect((await joinNode(nc, "node-12", TOKEN)).Accepted).toBe(true);
      expect(
        (await call(second.apiUrl, "PUT", "/api/v1/orchestrator/nodes/node-9", { Action: "approve" })).status,
      ).toBe(200);
      expect((await call(second.apiUrl, "PUT", "/api/v1/orchestrator/nodes/node-7", { Action: "delete" })).status).toBe(
        200,
      );
      expect((await joinNode(nc, "node-7", TOKEN, computeInfo("node-7", { zone: "d" }))).Accepted).toBe(true);
    } finally {
      await second.stop();
    }
    // The newest snapshot is lost, as if the process had died before writing it.
    copyFileSync(old, snapshotPath);
    rmSync(old);
    const tail = await restartAndObserve();
    expect(startedFrom(tail.logs)).toBe("snapshot");
    // Only the tail was read: the events stored after the old snapshot.
    const recovered = tail.logs.find((r) => r.msg === "recovered nodes from the event store");
    expect(recovered).toMatchObject({ fromSnapshot: true });
    expect(recovered?.events).toBeGreaterThan(0);
    expect(recovered?.events).toBeLessThan(30);
    rmSync(snapshotPath);
    const replayed = await restartAndObserve();
    expect(startedFrom(replayed.logs)).toBe("replay");
    expect(tail.seen).toEqual(replayed.seen);
    const list = tail.seen.list.Nodes as {
      Info: { NodeID: string; Labels: Record<string, string> };
      Membership: string;
    }[];
    const byId = new Map(list.map((n) => [n.Info.NodeID, n]));
    expect(byId.has("node-11") && byId.has("node-12")).toBe(true);
    expect(byId.get("node-9")?.Membership).toBe("APPROVED");
    expect(byId.get("node-7")?.Info.Labels.zone).toBe("d");
  }, 60_000);

  it("replays in full, saying why, when the snapshot is corrupt, of another version or of another store", async () => {
    expect(existsSync(snapshotPath)).toBe(true);
    const good = readFileSync(snapshotPath);
    const expected = (await restartAndObserve()).seen;

    const flipped = Buffer.from(good);
    flipped[flipped.length - 10] = (flipped[flipped.length - 10] ?? 0) ^ 0xff;
    const cases: [string, Buffer | string, RegExp][] = [
      ["a flipped byte", flipped, /does not match its checksum/],
      ["a truncated file", good.subarray(0, good.length - 100), /does not match its checksum/],
      ["garbage", "not a snapshot at all", /corrupt/],
      ["an empty file", Buffer.alloc(0), /corrupt/],
      ["another state version", withHeader(good, { stateVersion: 999 }), /version 999; this Shoal's are version/],
      [
        "another store",
        withHeader(good, { anchor: { stream: "node-node-1", revision: 0, id: "not-the-stored-id" } }),
        /does not belong to this store/,
      ],
    ];
    for (const [what, content, reason] of cases) {
      writeFileSync(snapshotPath, content);
      const run = await restartAndObserve();
      expect(startedFrom(run.logs), what).toBe("replay");
      expect(String(replayReason(run.logs)), what).toMatch(reason);
      expect(run.seen, what).toEqual(expected);
    }
  }, 120_000);
});

/** The snapshot with header fields replaced (the body, and its checksum, left as they were). */
function withHeader(file: Buffer, changes: Record<string, unknown>): Buffer {
  const packr = new Packr({ useRecords: true, mapsAsObjects: true });
  const headLength = file.readUInt32BE(0);
  const header = packr.unpack(file.subarray(4, 4 + headLength)) as Record<string, unknown>;
  const head = Buffer.from(packr.pack({ ...header, ...changes }));
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(head.length);
  return Buffer.concat([prefix, head, file.subarray(4 + headLength)]);
}
