import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { ClusterOrchestrator, clusterServeSettings } from "../support/shoal-cluster.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * Two `shoal serve` processes in cluster mode on one nats-server and the KurrentDB stand-in: what each shows of the
 * other's node (and its own) through a clean stop, a restart and a kill -9, and what an operator may delete.
 */
const LEASE_TTL_MS = 15_000;
const nats = natsPerSuite();
let standIn: KurrentStandIn;
let store: EsdbEventStore;
let one: ClusterOrchestrator;
let two: ClusterOrchestrator;

beforeAll(async () => {
  standIn = await KurrentStandIn.start();
  store = await EsdbEventStore.open(standIn.url);
  const common = clusterServeSettings(standIn.url, [nats.url], 4, [
    "Orchestrator.Cluster.Replicas=1",
    `Orchestrator.Cluster.LeaseTTL=${LEASE_TTL_MS}ms`,
    // Shorter than the lease TTL: an orchestrator's node is judged after the longer of the two.
    "Orchestrator.NodeManager.DisconnectTimeout=3s",
    "Orchestrator.NodeManager.UnknownTimeout=1h",
  ]);
  one = await ClusterOrchestrator.create("orch-1", common);
  two = await ClusterOrchestrator.create("orch-2", common);
  await Promise.all([one.start(), two.start()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
  await store?.close();
  await standIn?.close();
});

const health = async (via: ClusterOrchestrator, nodeId: string): Promise<string | undefined> => {
  const res = await via.api.call("GET", `/api/v1/orchestrator/nodes/${nodeId}`);
  return res.status === 200 ? (res.body.Node as { Health: string }).Health : undefined;
};

/** The node's stored events as `Type: reason`, oldest first. */
const history = async (nodeId: string): Promise<string[]> =>
  (await store.readStream(`node-${nodeId}`)).map((e) => `${e.type}: ${(e.metadata as { reason?: string }).reason}`);

const deleteNode = (via: ClusterOrchestrator, nodeId: string, reason: string) =>
  via.api.call("PUT", `/api/v1/orchestrator/nodes/${nodeId}`, { NodeID: nodeId, Action: "delete", Message: reason });

describe("orchestrators' nodes among several orchestrators", () => {
  it("shows each HEALTHY while it runs, UNHEALTHY once stopped or killed (saying which), deletable only then", async () => {
    const listed = await one.api.call("GET", "/api/v1/orchestrator/nodes");
    expect(listed.status).toBe(200);
    const rows = (listed.body.Nodes as { Info: { NodeID: string; NodeType: string }; Health: string }[]).map(
      (n) => `${n.Info.NodeID} ${n.Info.NodeType} ${n.Health}`,
    );
    expect(rows).toEqual(expect.arrayContaining(["orch-1 Requester HEALTHY", "orch-2 Requester HEALTHY"]));

    // A running orchestrator's node is refused, whichever orchestrator is asked.
    for (const via of [one, two]) {
      const refused = await deleteNode(via, "orch-1", "retire");
      expect(refused.status).toBe(409);
      expect(refused.body.Message).toContain(
        "is a running orchestrator (HEALTHY) and cannot be deleted: stop it first",
      );
    }

    // A clean stop: its node says so at once.
    await two.kill("SIGTERM");
    await waitFor(
      async () => (await health(one, "orch-2")) === "UNHEALTHY",
      10_000,
      () => "orch-2 UNHEALTHY",
    );
    expect((await history("orch-2")).at(-1)).toBe("NodeBecameUnhealthy: orchestrator orch-2 stopped");

    // Started again: HEALTHY again, and the other was never blamed.
    await two.start();
    await waitFor(
      async () => (await health(one, "orch-2")) === "HEALTHY",
      10_000,
      () => "orch-2 HEALTHY",
    );

    // Killed: nothing said; the other judges it once not heard from for the lease TTL (longer than DisconnectTimeout).
    await two.kill("SIGKILL");
    const killedAt = Date.now();
    await waitFor(
      async () => (await health(one, "orch-2")) === "UNHEALTHY",
      LEASE_TTL_MS + 15_000,
      () => "orch-2 UNHEALTHY after the kill",
    );
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_TTL_MS - 1_000);
    expect((await history("orch-2")).at(-1)).toMatch(
      /^NodeBecameUnhealthy: orchestrator orch-2 not heard from for \d+s$/,
    );
    expect((await history("orch-1")).filter((h) => !h.startsWith("NodeRegistered"))).toEqual([]);

    // The dead one can be deleted, with the operator's reason; the live one still cannot.
    const deleted = await deleteNode(one, "orch-2", "retired from the cluster");
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await history("orch-2")).at(-1)).toBe("NodeDeleted: retired from the cluster");
    await waitFor(
      async () => (await health(one, "orch-2")) === undefined,
      5_000,
      () => "orch-2 gone from the list",
    );
    // (Refused by orch-1's partition owner: 503, try again, while orch-2's partitions are still changing hands.)
    await waitFor(
      async () => (await deleteNode(one, "orch-1", "retire")).status === 409,
      10_000,
      () => "409",
    );
    expect((await history("orch-1")).filter((h) => !h.startsWith("NodeRegistered"))).toEqual([]);
  }, 120_000);
});
