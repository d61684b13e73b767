import { join } from "node:path";
import { nkeys } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { recoverNodes } from "../support/recover-nodes.ts";

// Pre-authorised nodes under manual approval, on a real SQLite store: they register APPROVED,
// the PENDING cap (MaxPendingNodes) does not hold them back since they will not be PENDING, and
// the pre-authorisation is recovered after a restart.

const nodeCtx = (id: string) => commandContext({ type: "node", id });
const opCtx = commandContext({ type: "operator", id: "alice" }, { reason: "rack 7" });
const M = 60_000;

const opened: { store: SqliteEventStore; manager: NodeManager }[] = [];
function setup(file: string) {
  const store = new SqliteEventStore(file);
  const manager = new NodeManager({
    store,
    clock: new ManualClock(),
    logger: silentLogger,
    manualApproval: true,
    thresholds: new HealthThresholds({ disconnectMs: 1 * M, unknownMs: 5 * M }),
    registrationLimits: { maxRegistrationsPerSecond: 0, registrationBurst: 0, maxPendingNodes: 1 },
  });
  opened.push({ store, manager });
  return { store, manager };
}
afterEach(async () => {
  for (const { store, manager } of opened.splice(0)) {
    manager.stop();
    await store.close();
  }
});
const membership = async (store: SqliteEventStore, id: string) =>
  (await store.readStream(`node-${id}`)).find((e) => e.type === "NodeRegistered")?.data;

describe("pre-authorised registration and the PENDING cap", () => {
  it("admits a pre-authorised node APPROVED after a restart from a node-state snapshot, which holds no node only pre-authorised", async () => {
    const file = join(tempDir(), "shoal.db");
    const first = setup(file);
    await recoverNodes(first.manager, first.store);
    await first.manager.preauthorize("pre-snap", undefined, opCtx);
    await first.manager.register(computeInfo("stranger-1"), nodeCtx("stranger-1"));
    const head = (await first.store.readAll()).at(-1)?.position ?? 0;
    first.manager.stop();

    // As a start from a snapshot written now: the registered node's state, none for the pre-authorised one.
    const second = setup(file);
    const stranger = (await second.store.readStream("node-stranger-1")).length;
    expect(stranger).toBeGreaterThan(0);
    await recoverNodes(second.manager, second.store, { position: head, views: [] });
    await second.manager.register(computeInfo("pre-snap"), nodeCtx("pre-snap"));
    expect(await membership(second.store, "pre-snap")).toMatchObject({ Membership: "APPROVED" });
  });

  it("admits a pre-authorised node APPROVED while the cap refuses strangers, also after a restart", async () => {
    const file = join(tempDir(), "shoal.db");
    const first = setup(file);
    await recoverNodes(first.manager, first.store);
    const key = nkeys.createUser().getPublicKey();
    await first.manager.preauthorize("pre-1", undefined, opCtx);
    await first.manager.preauthorize("pre-2", key, opCtx);
    await first.manager.preauthorize("pinned", nkeys.createUser().getPublicKey(), opCtx);
    await first.manager.register(computeInfo("stranger-1"), nodeCtx("stranger-1"));
    await expect(first.manager.register(computeInfo("stranger-2"), nodeCtx("stranger-2"))).rejects.toMatchObject({
      kind: "Forbidden",
    });
    await first.manager.register(computeInfo("pre-1"), nodeCtx("pre-1"));
    expect(await membership(first.store, "pre-1")).toMatchObject({ Membership: "APPROVED" });
    // Another key than the pinned one would make a PENDING node: the cap holds it back.
    await expect(
      first.manager.register(computeInfo("pinned"), nodeCtx("pinned"), nkeys.createUser().getPublicKey()),
    ).rejects.toMatchObject({ kind: "Forbidden" });
    expect(await first.store.readStream("node-stranger-2")).toEqual([]);
    first.manager.stop();

    const second = setup(file);
    await recoverNodes(second.manager, second.store);
    await second.manager.register(computeInfo("pre-2"), nodeCtx("pre-2"), key);
    expect(await membership(second.store, "pre-2")).toMatchObject({ Membership: "APPROVED" });
    expect((await second.store.readStream("node-pre-2")).map((e) => e.type)).toEqual([
      "NodePreauthorized",
      "NodeRegistered",
      "NodeCredentialBound",
    ]);

    // Revoked from its stream, whether or not the directory knows the node (a node-state snapshot holds no node only
    // pre-authorised).
    await second.manager.revokePreauthorization("pinned", opCtx);
    expect((await second.store.readStream("node-pinned")).map((e) => e.type)).toEqual([
      "NodePreauthorized",
      "NodePreauthorizationRevoked",
    ]);
    await expect(second.manager.revokePreauthorization("pinned", opCtx)).rejects.toMatchObject({ kind: "NotFound" });
    await expect(second.manager.revokePreauthorization("nobody", opCtx)).rejects.toMatchObject({ kind: "NotFound" });
    expect(await second.store.readStream("node-nobody")).toEqual([]);
  });
});
