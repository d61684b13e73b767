import { join } from "node:path";
import Database from "better-sqlite3";
import { nkeys } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { Listening } from "../../src/actors/listening.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager, type CredentialGate } from "../../src/actors/node-manager.ts";
import { SOLE_OWNER, type EntityOwnership } from "../../src/cluster/entity-ownership.ts";
import type { RegistrationLimits } from "../../src/actors/registration-admission.ts";
import { toNodeState } from "../../src/api/nodes/node-state.ts";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { HealthOverride } from "../../src/config/keys.ts";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";
import { nodeViewOf } from "../../src/projections/node-view.ts";
import type { Logger } from "pino";
import { capturedLogger } from "../support/captured-logger.ts";
import { ManualClock, settle } from "../support/manual-clock.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { recoverNodes } from "../support/recover-nodes.ts";

const S = 1000;
const M = 60 * S;
const nodeCtx = (id: string) => commandContext({ type: "node", id });
const opCtx = (reason?: string) => commandContext({ type: "operator", id: "alice" }, reason ? { reason } : {});

function setup(
  options: {
    file?: string;
    clock?: ManualClock;
    manualApproval?: boolean;
    overrides?: HealthOverride[];
    limits?: RegistrationLimits;
    maxResidentActors?: number;
    credentials?: CredentialGate;
    deadlines?: DeadlineScheduler;
    logger?: Logger;
    ownership?: EntityOwnership;
    self?: string;
    orchestratorSilenceMs?: number;
  } = {},
) {
  const file = options.file ?? join(tempDir(), "shoal.db");
  const store = new SqliteEventStore(file);
  const clock = options.clock ?? new ManualClock();
  const listening = Listening.begun(clock);
  const manager = new NodeManager({
    store,
    clock,
    listening,
    logger: options.logger ?? silentLogger,
    manualApproval: options.manualApproval ?? false,
    thresholds: new HealthThresholds({ disconnectMs: 1 * M, unknownMs: 5 * M }, options.overrides ?? []),
    ...(options.limits ? { registrationLimits: options.limits } : {}),
    ...(options.maxResidentActors === undefined ? {} : { maxResidentActors: options.maxResidentActors }),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.deadlines ? { deadlines: options.deadlines } : {}),
    ...(options.ownership ? { ownership: options.ownership } : {}),
    ...(options.self === undefined ? {} : { self: options.self }),
    ...(options.orchestratorSilenceMs === undefined ? {} : { orchestratorSilenceMs: options.orchestratorSilenceMs }),
  });
  opened.push({ store, manager });
  return { store, clock, manager, file, listening };
}

const opened: { store: SqliteEventStore; manager: NodeManager }[] = [];
afterEach(async () => {
  for (const { store, manager } of opened.splice(0)) {
    manager.stop();
    await store.close();
  }
});

async function types(store: SqliteEventStore, nodeId: string): Promise<string[]> {
  return (await store.readStream(`node-${nodeId}`)).map((e) => e.type);
}

describe("NodeManager health", () => {
  it("judges no node once it stops hearing them (a stop): silence then is the orchestrator's own", async () => {
    const { manager, clock, store } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await clock.advance(30 * S);
    manager.stopJudging();
    await clock.advance(10 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    // An operator's command still runs while the rest of the stop goes on.
    await manager.operatorAction({ action: "cordon" }, "n1", opCtx("maintenance"));
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeCordoned"]);
  });

  it("marks a silent node UNHEALTHY after DisconnectTimeout and UNKNOWN after UnknownTimeout, one event each", async () => {
    const { manager, clock, store } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await clock.advance(1 * M - 1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    await clock.advance(4 * M - 1);
    expect(await types(store, "n1")).toHaveLength(2);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy", "NodeBecameUnknown"]);
    await clock.advance(60 * M);
    expect(await types(store, "n1")).toHaveLength(3);

    const [, unhealthy, unknown] = await store.readStream("node-n1");
    expect(unhealthy!.data).toMatchObject({ LastHeartbeat: "2026-01-01T00:00:00.000Z", DisconnectTimeoutMs: 60000 });
    expect(unknown!.metadata).toMatchObject({ actor: { type: "system" }, reason: "no heartbeat for 300s" });

    await manager.heartbeat("n1");
    await settle();
    expect(await types(store, "n1")).toEqual([
      "NodeRegistered",
      "NodeBecameUnhealthy",
      "NodeBecameUnknown",
      "NodeBecameHealthy",
    ]);
  });

  it("writes nothing for heartbeats of a healthy node, however many", async () => {
    const { manager, clock, store } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    const timers = clock.pendingTimers;
    for (let i = 0; i < 100; i++) {
      expect(manager.heartbeat("n1")).toBeUndefined(); // no actor, no store: synchronous
      await clock.advance(15 * S);
    }
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    expect(clock.pendingTimers).toBe(timers); // one deadline heap timer, not one per heartbeat
    expect(manager.deadlineCount).toBe(2); // n1's health deadline and the actors' idle sweep
  });

  it("records a healthy node's heartbeat from its id's bytes, once per run of heartbeats reading the clock, and leaves every other case to heartbeat()", async () => {
    /** A clock the test can move without awaiting (ManualClock's advance lets microtasks run). */
    class SteppedClock extends ManualClock {
      step = 0;
      override now(): number {
        return super.now() + this.step;
      }
    }
    const { manager, clock, store } = setup({ clock: new SteppedClock() });
    await recoverNodes(manager, store);
    for (const id of ["n1", "n12"]) await manager.register(computeInfo(id), nodeCtx(id));
    const message = new TextEncoder().encode("..n12..");
    const beat = (id: string) => manager.beatIfHealthy(message, 2, id.length);
    await clock.advance(10 * S);
    const run = clock.now();
    expect(beat("n1")).toBe(true);
    expect(beat("n12")).toBe(true);
    // The same run of heartbeats (no await between them): both recorded at its start.
    (clock as SteppedClock).step = 5;
    expect(beat("n1")).toBe(true);
    expect([manager.live("n1")?.lastHeartbeat, manager.live("n12")?.lastHeartbeat]).toEqual([run, run]);
    await Promise.resolve();
    expect(beat("n1")).toBe(true);
    expect(manager.live("n1")?.lastHeartbeat).toBe(run + 5);
    expect(manager.beatIfHealthy(message, 2, 1)).toBe(false); // "n": nobody
    expect(manager.beatIfHealthy(message, 0, 5)).toBe(false);

    // UNHEALTHY: not recorded here; heartbeat() brings it back through its actor.
    (clock as SteppedClock).step = 0;
    await clock.advance(1 * M);
    expect(await types(store, "n12")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    const silentSince = manager.live("n12")?.lastHeartbeat;
    expect(beat("n12")).toBe(false);
    expect(manager.live("n12")?.lastHeartbeat).toBe(silentSince);
    await manager.heartbeat("n12");
    expect(await types(store, "n12")).toEqual(["NodeRegistered", "NodeBecameUnhealthy", "NodeBecameHealthy"]);
    expect(beat("n12")).toBe(true);

    await manager.operatorAction("delete", "n1", opCtx());
    expect(beat("n1")).toBe(false);
    // its last heartbeat was 5 ms later: still healthy
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeDeleted"]);
  });

  it("refuses heartbeats from unknown and deleted nodes", async () => {
    const { manager, store } = setup();
    await recoverNodes(manager, store);
    expect(() => manager.heartbeat("ghost")).toThrow("node not registered: ghost");
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await manager.operatorAction("delete", "n1", opCtx());
    expect(() => manager.heartbeat("n1")).toThrow("node not registered: n1");
  });

  it("among several orchestrators, refuses reports of a node it has not learnt of yet as Unavailable", async () => {
    // Another orchestrator registered it a moment ago: this one's read model has not folded that yet. NotFound would
    // tell the agent it was deleted, and it would stop reporting for good.
    const { manager, store } = setup({ ownership: SOLE_OWNER });
    await recoverNodes(manager, store);
    const resources = { AvailableCapacity: {}, QueueUsedCapacity: {}, RunningExecutions: 0, EnqueuedExecutions: 0 };
    const notYet = {
      kind: "Unavailable",
      message: "node n1 is not known to this orchestrator yet (its registration is on its way)",
    };
    expect(() => manager.heartbeat("n1")).toThrow(expect.objectContaining(notYet));
    expect(() => manager.updateResources("n1", resources)).toThrow(expect.objectContaining(notYet));
    await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).rejects.toMatchObject(notYet);
    expect(await store.readAll()).toEqual([]);
    // One it knows was deleted is refused NotFound, as by a sole orchestrator.
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await manager.operatorAction("delete", "n1", opCtx());
    expect(() => manager.heartbeat("n1")).toThrow(expect.objectContaining({ kind: "NotFound" }));
    expect(() => manager.updateResources("n1", resources)).toThrow(expect.objectContaining({ kind: "NotFound" }));
    await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).rejects.toMatchObject({ kind: "NotFound" });
  });

  it("gives every node a full DisconnectTimeout after a restart before it can become UNHEALTHY", async () => {
    const clock = new ManualClock();
    const first = setup({ clock });
    await recoverNodes(first.manager, first.store);
    await first.manager.register(computeInfo("n1"), nodeCtx("n1"));
    await first.manager.register(computeInfo("n2"), nodeCtx("n2"));
    await clock.advance(50 * S);
    first.manager.stop();
    await first.store.close();
    opened.splice(0);

    await clock.advance(10 * M); // the orchestrator was down for ten minutes
    const second = setup({ clock, file: first.file });
    await recoverNodes(second.manager, second.store);
    await clock.advance(1 * M - 1);
    await second.manager.heartbeat("n2");
    expect(await types(second.store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    expect(await types(second.store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    expect(await types(second.store, "n2")).toEqual(["NodeRegistered"]);
    const [, unhealthy] = await second.store.readStream("node-n1");
    expect(unhealthy!.data).toMatchObject({ LastHeartbeat: null });
  });

  it("applies per-node and per-group thresholds over the defaults", async () => {
    const overrides: HealthOverride[] = [
      { NodeIDs: ["special"], DisconnectTimeout: 10 * S },
      { Selector: "zone=edge", DisconnectTimeout: 5 * M, UnknownTimeout: 30 * M },
    ];
    const { manager, clock, store } = setup({ overrides });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("special", { zone: "edge" }), nodeCtx("special"));
    await manager.register(computeInfo("edge1", { zone: "edge" }), nodeCtx("edge1"));
    await manager.register(computeInfo("plain"), nodeCtx("plain"));
    await clock.advance(10 * S);
    expect(await types(store, "special")).toContain("NodeBecameUnhealthy");
    await clock.advance(1 * M);
    expect(await types(store, "plain")).toContain("NodeBecameUnhealthy");
    expect(await types(store, "edge1")).toEqual(["NodeRegistered"]);
    await clock.advance(4 * M);
    expect(await types(store, "edge1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
  });
});

describe("NodeManager: orchestrators' nodes", () => {
  const orchestratorInfo = (id: string): NodeInfo => {
    const { ComputeNodeInfo: _none, ...info } = computeInfo(id);
    return { ...info, NodeType: "Requester" };
  };
  const reasons = async (store: SqliteEventStore, id: string) =>
    (await store.readStream(`node-${id}`)).map((e) => `${e.type}: ${(e.metadata as { reason?: string }).reason}`);

  it("never judges its own node; another orchestrator's is HEALTHY while heard, UNHEALTHY once silent", async () => {
    const clock = new ManualClock();
    // orch-b registered itself on the shared store, and went on announcing itself.
    const b = setup({ clock, self: "orch-b" });
    await recoverNodes(b.manager, b.store);
    await b.manager.registerSelf(orchestratorInfo("orch-b"));
    const a = setup({ clock, file: b.file, self: "orch-a", orchestratorSilenceMs: 2 * M });
    await recoverNodes(a.manager, a.store);
    const startedAt = clock.now();
    await a.manager.registerSelf(orchestratorInfo("orch-a"));
    // Heard every 30 s for ten minutes: nobody's node is judged; A's own is never tracked.
    for (let i = 0; i < 20; i++) {
      await clock.advance(30 * S);
      a.manager.orchestratorHeard("orch-b");
      // Its own name (a former start's last words) and names it does not know yet change nothing.
      a.manager.orchestratorHeard("orch-a");
      a.manager.orchestratorHeard("orch-new");
    }
    // Its own node's last sign of life is its start.
    expect(a.manager.live("orch-a")).toEqual({ lastHeartbeat: startedAt, resources: undefined });
    expect(a.manager.live("orch-b")?.lastHeartbeat).toBe(clock.now());
    // Silent: judged after the longer of DisconnectTimeout (1 m) and the announcements' bound (2 m).
    await clock.advance(2 * M - 1);
    expect(await types(a.store, "orch-b")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    a.manager.orchestratorHeard("orch-a");
    expect(await reasons(a.store, "orch-b")).toEqual([
      "NodeRegistered: orchestrator orch-b started",
      "NodeBecameUnhealthy: orchestrator orch-b not heard from for 120s",
    ]);
    // Heard again (restarted, or its NATS back): HEALTHY again.
    a.manager.orchestratorHeard("orch-b");
    await settle();
    expect((await reasons(a.store, "orch-b")).at(-1)).toBe("NodeBecameHealthy: orchestrator orch-b heard from again");
    expect(await types(a.store, "orch-a")).toEqual(["NodeRegistered"]);
  });

  it("turns a retired orchestrator's node UNHEALTHY after the usual timeout; its own stays HEALTHY", async () => {
    const clock = new ManualClock();
    const old = setup({ clock, self: "orch-old" });
    await recoverNodes(old.manager, old.store);
    await old.manager.registerSelf(orchestratorInfo("orch-old"));
    old.manager.stop();
    await old.store.close();
    opened.splice(0);

    const now = setup({ clock, file: old.file, self: "orch-now" });
    await recoverNodes(now.manager, now.store);
    await now.manager.registerSelf(orchestratorInfo("orch-now"));
    await clock.advance(1 * M);
    expect(await reasons(now.store, "orch-old")).toEqual([
      "NodeRegistered: orchestrator orch-old started",
      "NodeBecameUnhealthy: orchestrator orch-old not heard from for 60s",
    ]);
    await clock.advance(60 * M);
    expect(await types(now.store, "orch-now")).toEqual(["NodeRegistered"]);
  });

  it("marks its own node stopped on a clean stop and HEALTHY on its next start; deletes it only while stopped", async () => {
    const { manager, clock, store } = setup({ self: "orch-a" });
    await recoverNodes(manager, store);
    await manager.registerSelf(orchestratorInfo("orch-a"));
    const live = await manager.operatorAction("delete", "orch-a", opCtx("retired")).catch((e: unknown) => e);
    expect(live).toMatchObject({ message: expect.stringContaining("is a running orchestrator (HEALTHY)") });
    await clock.advance(5 * S);
    await manager.markSelfStopped("orch-a");
    const [, stopped] = await store.readStream("node-orch-a");
    expect(stopped!.data).toMatchObject({ LastHeartbeat: "2026-01-01T00:00:05.000Z", DisconnectTimeoutMs: 60000 });
    // Started again later and HEALTHY: its LastHeartbeat is that start, not the stop before it; once stopped, the stop.
    const lastHeartbeat = async () =>
      toNodeState(nodeViewOf(await manager.nodeState("orch-a"), 0)!, manager.live("orch-a")).ConnectionState
        .LastHeartbeat;
    await clock.advance(5 * S);
    await manager.registerSelf(orchestratorInfo("orch-a"));
    await clock.advance(10 * M);
    expect(await lastHeartbeat()).toBe("2026-01-01T00:00:10.000Z");
    await manager.markSelfStopped("orch-a");
    expect(await lastHeartbeat()).toBe("2026-01-01T00:10:10.000Z");
    await manager.operatorAction("delete", "orch-a", opCtx("retired"));
    expect(await reasons(store, "orch-a")).toEqual([
      "NodeRegistered: orchestrator orch-a started",
      "NodeBecameUnhealthy: orchestrator orch-a stopped",
      "NodeBecameHealthy: orchestrator orch-a started",
      "NodeBecameUnhealthy: orchestrator orch-a stopped",
      "NodeDeleted: retired",
    ]);
  });
});

describe("NodeManager while the orchestrator's own transport is down", () => {
  it("marks no node UNHEALTHY or UNKNOWN for silence during the outage, then gives each a full DisconnectTimeout", async () => {
    const { manager, clock, store, listening } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await manager.register(computeInfo("n2"), nodeCtx("n2"));
    await clock.advance(30 * S);
    listening.transportDown("NATS connection lost");
    await clock.advance(30 * M); // past both DisconnectTimeout and UnknownTimeout
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    expect(await types(store, "n2")).toEqual(["NodeRegistered"]);

    listening.transportUp();
    await clock.advance(1 * M - 1);
    await manager.heartbeat("n2");
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    expect(await types(store, "n2")).toEqual(["NodeRegistered"]);
    const [, unhealthy] = await store.readStream("node-n1");
    expect(unhealthy!.data).toMatchObject({ LastHeartbeat: "2026-01-01T00:00:00.000Z" });
    // As after a restart, UNKNOWN comes UnknownTimeout after the transport is back, not at once.
    await clock.advance(4 * M - 1);
    expect(await types(store, "n1")).toHaveLength(2);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy", "NodeBecameUnknown"]);
  });

  it("does not move an UNHEALTHY node to UNKNOWN during the outage, nor sooner than a DisconnectTimeout after it", async () => {
    const { manager, clock, store, listening } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await clock.advance(1 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    listening.transportDown("embedded nats-server exited");
    await clock.advance(10 * M); // UnknownTimeout (5m from the last heartbeat) passes meanwhile
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    listening.transportUp();
    await clock.advance(1 * M - 1);
    expect(await types(store, "n1")).toHaveLength(2);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy", "NodeBecameUnknown"]);
  });

  it("drops a health change already on its way to the store when the transport goes down", async () => {
    const { manager, clock, store, listening } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    // Keep n1's actor busy so the deadline's command waits in its mailbox.
    const busy = manager.updateInfo(computeInfo("n1", { rack: "r1" }), nodeCtx("n1"));
    const passing = clock.advance(1 * M); // the deadline fires and queues MarkUnhealthy
    listening.transportDown("NATS connection lost");
    await Promise.all([busy, passing]);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeInfoUpdated"]);
    listening.transportUp();
    await clock.advance(1 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeInfoUpdated", "NodeBecameUnhealthy"]);
  });

  it("counts a node registered during the outage from when the transport is back", async () => {
    const { manager, clock, store, listening } = setup();
    await recoverNodes(manager, store);
    listening.transportDown("NATS connection lost");
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await clock.advance(5 * M);
    listening.transportUp();
    await clock.advance(1 * M - 1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
  });

  it("keeps heartbeats of healthy nodes synchronous and store-free during and after an outage", async () => {
    const { manager, clock, store, listening } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    listening.transportDown("NATS connection lost");
    expect(manager.heartbeat("n1")).toBeUndefined();
    listening.transportUp();
    expect(manager.heartbeat("n1")).toBeUndefined();
    await clock.advance(59 * S);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    expect(manager.deadlineCount).toBe(2); // n1's health deadline and the actors' idle sweep
  });
});

describe("NodeManager membership", () => {
  it("records who did what and why, with correlation and causation ids", async () => {
    const { manager, store } = setup({ manualApproval: true });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("node-3"), nodeCtx("node-3"));
    await manager.operatorAction("reject", "node-3", opCtx("malicious node?"));
    const [registered, rejected] = await store.readStream("node-node-3");
    expect(registered!.data).toMatchObject({ Membership: "PENDING" });
    expect(registered!.metadata).toMatchObject({ actor: { type: "node", id: "node-3" }, schemaVersion: 1 });
    expect(rejected!.metadata).toMatchObject({
      actor: { type: "operator", id: "alice" },
      reason: "malicious node?",
      schemaVersion: 1,
    });
    expect(typeof rejected!.metadata.correlationId).toBe("string");
    expect(typeof rejected!.metadata.causationId).toBe("string");
    await expect(manager.register(computeInfo("node-3"), nodeCtx("node-3"))).rejects.toMatchObject({
      kind: "Forbidden",
      message: "node has been rejected",
    });
  });

  it("resolves exact ids before prefixes and reports ambiguous prefixes", async () => {
    const { manager, store } = setup();
    await recoverNodes(manager, store);
    for (const id of ["node-1", "node-10", "node-2"]) await manager.register(computeInfo(id), nodeCtx(id));
    expect(manager.resolve("node-1")).toBe("node-1");
    expect(manager.resolve("node-2")).toBe("node-2");
    expect(() => manager.resolve("node-")).toThrow(
      "multiple nodes found for prefix: node-, matching IDs: [node-1, node-10, node-2]",
    );
    expect(() => manager.resolve("nope")).toThrow("node not found: nope");
  });

  it("acts on the exact id it is given, never on a node that id is a prefix of", async () => {
    // The caller (the REST route, here or on another orchestrator) resolved the prefix; resolving it again here could
    // act on another node, in a partition another orchestrator owns.
    const { manager, store } = setup({ ownership: SOLE_OWNER });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("abcd"), nodeCtx("abcd"));
    const before = (await store.readAll()).length;
    const notYet = {
      kind: "Unavailable",
      message: "node abc is not known to this orchestrator yet (its registration is on its way)",
    };
    await expect(manager.operatorAction("reject", "abc", opCtx())).rejects.toMatchObject(notYet);
    await expect(manager.drain("abc", { deadlineMs: M, keepDaemon: false }, opCtx())).rejects.toMatchObject(notYet);
    await expect(manager.undrain("abc", opCtx())).rejects.toMatchObject(notYet);
    expect(await store.readAll()).toHaveLength(before);
    // One it knows, deleted, is NotFound, as by a sole orchestrator.
    await manager.register(computeInfo("abc"), nodeCtx("abc"));
    await manager.operatorAction("delete", "abc", opCtx());
    await expect(manager.operatorAction("reject", "abc", opCtx())).rejects.toMatchObject({ kind: "NotFound" });
    expect((await store.readAll()).filter((e) => e.stream === "node-abcd")).toHaveLength(1);
  });

  it("rebuilds every node from its stream on start, deleted and re-registered lifecycles included", async () => {
    const clock = new ManualClock();
    const first = setup({ clock, manualApproval: true });
    await recoverNodes(first.manager, first.store);
    await first.manager.register(computeInfo("a"), nodeCtx("a"));
    await first.manager.operatorAction("approve", "a", opCtx());
    await first.manager.operatorAction("delete", "a", opCtx());
    await first.manager.register(computeInfo("a"), nodeCtx("a"));
    first.manager.stop();
    await first.store.close();
    opened.splice(0);

    const second = setup({ clock, file: first.file, manualApproval: true });
    expect(await recoverNodes(second.manager, second.store)).toMatchObject({ nodes: 1, events: 4 });
    await expect(second.manager.operatorAction("approve", "a", opCtx())).resolves.toMatchObject({ revision: 4 });
    const registrations = (await second.store.readStream("node-a"))
      .filter((e) => e.type === "NodeRegistered")
      .map((e) => (e.data as { Lifecycle: number }).Lifecycle);
    expect(registrations).toEqual([1, 2]);
  });

  it("honours an expected revision (If-Match)", async () => {
    const { manager, store } = setup({ manualApproval: true });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("a"), nodeCtx("a"));
    await expect(manager.operatorAction("approve", "a", opCtx(), 7)).rejects.toMatchObject({
      kind: "PreconditionFailed",
    });
    await expect(manager.operatorAction("approve", "a", opCtx(), 0)).resolves.toMatchObject({ revision: 1 });
  });
});

describe("NodeManager info reports", () => {
  it("answers an unchanged info report without loading the node's actor, and stores a changed one", async () => {
    const { manager, store } = setup({ maxResidentActors: 1 });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    // The first report after a registration is decided by the actor; from then on the manager knows the info.
    await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).resolves.toEqual([]);
    await manager.register(computeInfo("n2"), nodeCtx("n2")); // n1's actor is evicted (at most one resident)
    const loaded = manager.actorStats.loaded;
    for (let i = 0; i < 3; i++) await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).resolves.toEqual([]);
    expect(manager.actorStats.loaded).toBe(loaded);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);

    const changed = computeInfo("n1", { rack: "r7" });
    await expect(manager.updateInfo(changed, nodeCtx("n1"))).resolves.toMatchObject([
      { type: "NodeInfoUpdated", data: { Changed: ["Labels"] } },
    ]);
    expect(manager.actorStats.loaded).toBe(loaded + 1);
    await manager.register(computeInfo("n3"), nodeCtx("n3"));
    const after = manager.actorStats.loaded;
    await expect(manager.updateInfo(changed, nodeCtx("n1"))).resolves.toEqual([]);
    expect(manager.actorStats.loaded).toBe(after);
    // The info it had before is a change again, stored as the actor decides it.
    await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).resolves.toMatchObject([
      { type: "NodeInfoUpdated" },
    ]);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeInfoUpdated", "NodeInfoUpdated"]);
  });

  it("leaves to the actor a report from a node an operator rejected, or that re-registered with other info", async () => {
    const { manager, store } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await manager.updateInfo(computeInfo("n1"), nodeCtx("n1"));
    await manager.operatorAction("reject", "n1", opCtx());
    await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).rejects.toMatchObject({
      kind: "Forbidden",
      message: "node registration rejected",
    });
    await manager.operatorAction("approve", "n1", opCtx());
    const relabelled = computeInfo("n1", { zone: "b" });
    await manager.register(relabelled, nodeCtx("n1"));
    await expect(manager.updateInfo(computeInfo("n1"), nodeCtx("n1"))).resolves.toMatchObject([
      { type: "NodeInfoUpdated" },
    ]);
    expect(await types(store, "n1")).toEqual([
      "NodeRegistered",
      "NodeRejected",
      "NodeApproved",
      "NodeInfoUpdated",
      "NodeInfoUpdated",
    ]);
  });

  it("after a restart, answers unchanged reports from the recovered state, and stores changed ones through the actor", async () => {
    const clock = new ManualClock();
    const first = setup({ clock });
    await recoverNodes(first.manager, first.store);
    await first.manager.register(computeInfo("n1", { zone: "a" }), nodeCtx("n1"));
    await first.manager.updateInfo(computeInfo("n1", { zone: "b" }), nodeCtx("n1"));
    first.manager.stop();
    await first.store.close();
    opened.splice(0);

    const second = setup({ clock, file: first.file });
    await recoverNodes(second.manager, second.store);
    await second.manager.whenInfoPrintsLearnt();
    await expect(second.manager.updateInfo(computeInfo("n1", { zone: "b" }), nodeCtx("n1"))).resolves.toEqual([]);
    expect(second.manager.actorStats.loaded).toBe(0);
    await expect(second.manager.updateInfo(computeInfo("n1", { zone: "a" }), nodeCtx("n1"))).resolves.toMatchObject([
      { type: "NodeInfoUpdated" },
    ]);
    expect(second.manager.actorStats.loaded).toBe(1);
    await expect(second.manager.updateInfo(computeInfo("n1", { zone: "a" }), nodeCtx("n1"))).resolves.toEqual([]);
    expect(await types(second.store, "n1")).toEqual(["NodeRegistered", "NodeInfoUpdated", "NodeInfoUpdated"]);
  });

  it("learns no print after a restart from a recovered state that something stored since has replaced", async () => {
    const clock = new ManualClock();
    const first = setup({ clock });
    await recoverNodes(first.manager, first.store);
    const ids = Array.from({ length: 2500 }, (_, i) => `n${i}`);
    for (const id of ids) await first.manager.register(computeInfo(id, { zone: "a" }), nodeCtx(id));
    first.manager.stop();
    await first.store.close();
    opened.splice(0);

    const second = setup({ clock, file: first.file });
    await recoverNodes(second.manager, second.store);
    // Learning yields every 1,000 nodes: the last node's info changes before its print is learnt.
    const last = ids[ids.length - 1] as string;
    await second.manager.updateInfo(computeInfo(last, { zone: "b" }), nodeCtx(last));
    await second.manager.whenInfoPrintsLearnt();
    await expect(second.manager.updateInfo(computeInfo(last, { zone: "a" }), nodeCtx(last))).resolves.toMatchObject([
      { type: "NodeInfoUpdated" },
    ]);
    await expect(second.manager.updateInfo(computeInfo("n0", { zone: "a" }), nodeCtx("n0"))).resolves.toEqual([]);
    expect(await types(second.store, last)).toEqual(["NodeRegistered", "NodeInfoUpdated", "NodeInfoUpdated"]);
  });
});

describe("NodeManager credentials at start-up", () => {
  it("follows another orchestrator's joins and rejects: its NATS gate admits and revokes alike", async () => {
    const clock = new ManualClock();
    const applied = new Map<string, string | undefined>();
    const gate: CredentialGate = { apply: async (nodeId, key) => void applied.set(nodeId, key) };
    const writer = setup({ clock });
    await recoverNodes(writer.manager, writer.store);
    const follower = setup({ clock, credentials: gate });
    await recoverNodes(follower.manager, follower.store);
    const key = nkeys.createUser().getPublicKey();
    await writer.manager.join(computeInfo("n1"), key, nodeCtx("n1"));
    follower.manager.observe({ ...(await writer.manager.nodeState("n1")), revision: 1 });
    expect(applied.get("n1")).toBe(key);
    await writer.manager.operatorAction("reject", "n1", opCtx("not ours"));
    follower.manager.observe({ ...(await writer.manager.nodeState("n1")), revision: 3 });
    expect(applied.has("n1")).toBe(true);
    expect(applied.get("n1")).toBeUndefined();
  });

  it("hands the live keys recovery found to NATS once, and keeps none without a credential gate", async () => {
    const clock = new ManualClock();
    const applied = new Map<string, string | undefined>();
    const gate: CredentialGate = { apply: async (nodeId, key) => void applied.set(nodeId, key) };
    const first = setup({ clock, credentials: gate });
    await recoverNodes(first.manager, first.store);
    const key = nkeys.createUser().getPublicKey();
    await first.manager.join(computeInfo("n1"), key, nodeCtx("n1"));
    expect(applied.get("n1")).toBe(key);
    first.manager.stop();
    await first.store.close();
    opened.splice(0);

    const second = setup({ clock, file: first.file, credentials: gate });
    await recoverNodes(second.manager, second.store);
    expect(second.manager.activeCredentials()).toEqual([["n1", key]]);
    expect(second.manager.activeCredentials()).toEqual([]);
    const ungated = setup({ clock, file: first.file });
    await recoverNodes(ungated.manager, ungated.store);
    expect(ungated.manager.activeCredentials()).toEqual([]);
  });
});

describe("NodeManager limits", () => {
  const limits = (l: Partial<RegistrationLimits>): RegistrationLimits => ({
    maxRegistrationsPerSecond: 0,
    registrationBurst: 0,
    maxPendingNodes: 0,
    ...l,
  });
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e: { kind?: string }) => e.kind ?? String(e),
    );

  it("creates nothing for info, resources or heartbeats from nodes it does not know", async () => {
    const { manager, store } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("real"), nodeCtx("real"));
    const actors = manager.nodeCount;
    const events = (await store.readAll()).length;
    for (let i = 0; i < 200; i++) {
      const id = `ghost-${i}`;
      await expect(manager.updateInfo(computeInfo(id), nodeCtx(id))).rejects.toMatchObject({
        kind: "NotFound",
        message: `node not registered: ${id}`,
      });
      expect(() =>
        manager.updateResources(id, {
          AvailableCapacity: {},
          QueueUsedCapacity: {},
          RunningExecutions: 0,
          EnqueuedExecutions: 0,
        }),
      ).toThrow(`node not registered: ${id}`);
      expect(() => manager.heartbeat(id)).toThrow(`node not registered: ${id}`);
    }
    expect(manager.nodeCount).toBe(actors);
    expect((await store.readAll()).length).toBe(events);
    expect(manager.live("ghost-0")).toBeUndefined();
  });

  it("throttles new registrations by rate and burst, never known nodes re-registering, and stores nothing it refuses", async () => {
    const { manager, clock, store } = setup({ limits: limits({ maxRegistrationsPerSecond: 2, registrationBurst: 3 }) });
    await recoverNodes(manager, store);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => outcome(manager.register(computeInfo(`n${i}`), nodeCtx(`n${i}`)))),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(3);
    expect(results.filter((r) => r === "Unavailable")).toHaveLength(7);
    expect(manager.nodeCount).toBe(3);
    expect((await store.readAll()).map((e) => e.type)).toEqual(["NodeRegistered", "NodeRegistered", "NodeRegistered"]);

    const refused = await manager.register(computeInfo("late"), nodeCtx("late")).catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "Unavailable", retryAfterSeconds: 1 });
    expect((refused as Error).message).toMatch(
      /too many new nodes registering \(Orchestrator.NodeManager.MaxRegistrationsPerSecond=2, RegistrationBurst=3\); try again in 1s/,
    );

    // Known nodes re-register (an agent restart) and heartbeat whatever the bucket holds.
    await expect(manager.register(computeInfo("n0", { zone: "b" }), nodeCtx("n0"))).resolves.toMatchObject({
      note: "node already registered",
    });
    expect(manager.heartbeat("n1")).toBeUndefined();

    await clock.advance(500);
    await expect(manager.register(computeInfo("late"), nodeCtx("late"))).resolves.toMatchObject({
      note: "node registered",
    });
    await expect(manager.register(computeInfo("later"), nodeCtx("later"))).rejects.toMatchObject({
      kind: "Unavailable",
    });
    expect(manager.nodeCount).toBe(4);
  });

  it("logs refused registrations as one line per interval: refused by reason, admitted meanwhile", async () => {
    const { logger, messages } = capturedLogger();
    const { manager, clock, store } = setup({
      manualApproval: true,
      limits: limits({ maxRegistrationsPerSecond: 1, registrationBurst: 3, maxPendingNodes: 2 }),
      logger,
    });
    await recoverNodes(manager, store);
    const summaries = () => messages("new nodes refused registration");
    // p0, p1 admitted; p2 takes the last token but meets the PENDING cap; p3, p4 find no token.
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await outcome(manager.register(computeInfo(`p${i}`), nodeCtx(`p${i}`))));
    expect(results).toEqual(["ok", "ok", "Forbidden", "Unavailable", "Unavailable"]);
    expect(summaries()).toEqual([]);

    await clock.advance(1 * S);
    await manager.operatorAction("approve", "p0", opCtx());
    await manager.register(computeInfo("q"), nodeCtx("q"));
    await clock.advance(9 * S - 1);
    expect(summaries()).toEqual([]);
    await clock.advance(1);
    expect(summaries()).toHaveLength(1);
    expect(summaries()[0]).toMatchObject({
      level: 40,
      refused: 3,
      admitted: 1,
      byReason: { MaxRegistrationsPerSecond: 2, MaxPendingNodes: 1 },
      overMs: 10 * S,
      limits: { maxRegistrationsPerSecond: 1, registrationBurst: 3, maxPendingNodes: 2 },
    });

    // Nothing refused since: no line. A refusal opens the next interval; stopping writes it out.
    await clock.advance(60 * S);
    expect(summaries()).toHaveLength(1);
    await expect(manager.register(computeInfo("r"), nodeCtx("r"))).rejects.toMatchObject({ kind: "Forbidden" });
    manager.stop();
    expect(summaries()).toHaveLength(2);
    expect(summaries()[1]).toMatchObject({ refused: 1, admitted: 0, byReason: { MaxPendingNodes: 1 }, overMs: 0 });
  });

  it("counts a deleted node coming back as new", async () => {
    const { manager, store } = setup({ limits: limits({ maxRegistrationsPerSecond: 1, registrationBurst: 1 }) });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("a"), nodeCtx("a"));
    await manager.operatorAction("delete", "a", opCtx());
    await expect(manager.register(computeInfo("a"), nodeCtx("a"))).rejects.toMatchObject({ kind: "Unavailable" });
    expect(manager.nodeCount).toBe(1); // its history stays
  });

  it("caps PENDING nodes under manual approval, concurrent registrations included, until an operator acts", async () => {
    const { manager, store } = setup({ manualApproval: true, limits: limits({ maxPendingNodes: 3 }) });
    await recoverNodes(manager, store);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => outcome(manager.register(computeInfo(`p${i}`), nodeCtx(`p${i}`)))),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(3);
    expect(results.filter((r) => r === "Forbidden")).toHaveLength(5);
    expect(manager.nodeCount).toBe(3);
    expect(await store.readAll()).toHaveLength(3);

    const refusal = await manager.register(computeInfo("x"), nodeCtx("x")).catch((e: unknown) => e);
    expect(refusal).toMatchObject({ kind: "Forbidden" });
    expect((refusal as Error).message).toBe(
      "cannot register node x: the limit of 3 nodes awaiting approval (Orchestrator.NodeManager.MaxPendingNodes) is reached. " +
        "An operator must approve, reject or delete pending nodes (shoal node list --filter-approval=pending) or raise the limit",
    );
    // PENDING nodes themselves still re-register and heartbeat.
    const pending = results.flatMap((r, i) => (r === "ok" ? [`p${i}`] : []));
    await expect(manager.register(computeInfo(pending[0]!), nodeCtx(pending[0]!))).resolves.toMatchObject({
      note: "node already registered",
    });

    await manager.operatorAction("approve", pending[0]!, opCtx());
    await manager.register(computeInfo("x"), nodeCtx("x"));
    await expect(manager.register(computeInfo("y"), nodeCtx("y"))).rejects.toMatchObject({ kind: "Forbidden" });
    await manager.operatorAction("reject", pending[1]!, opCtx());
    await manager.register(computeInfo("y"), nodeCtx("y"));
    await manager.operatorAction("delete", pending[2]!, opCtx());
    await manager.register(computeInfo("z"), nodeCtx("z"));
    await expect(manager.register(computeInfo("w"), nodeCtx("w"))).rejects.toMatchObject({ kind: "Forbidden" });
  });

  it("does not cap nodes that need no approval", async () => {
    const { manager, store } = setup({ manualApproval: false, limits: limits({ maxPendingNodes: 1 }) });
    await recoverNodes(manager, store);
    for (const id of ["a", "b", "c"]) await manager.register(computeInfo(id), nodeCtx(id));
    expect(manager.nodeCount).toBe(3);
  });

  it("tries a health change the store could not take again 5 s later, as a deadline of the one heap", async () => {
    const clock = new ManualClock();
    const deadlines = new DeadlineScheduler(clock);
    const { manager, store, file } = setup({ clock, deadlines });
    await recoverNodes(manager, store);
    await manager.register(computeInfo("n1"), nodeCtx("n1"));
    await clock.advance(1 * M - 1);
    // Another connection takes the events table away: the health change cannot be stored.
    const other = new Database(file);
    try {
      other.exec("ALTER TABLE events RENAME TO events_away");
      await clock.advance(1);
      await clock.advance(2 * S);
      // Every wait of the node manager (the retry, the actors' idle sweep) is on its one heap: one timer.
      expect(clock.pendingTimers).toBe(1);
      expect(deadlines.size).toBe(2);
      other.exec("ALTER TABLE events_away RENAME TO events");
    } finally {
      other.close();
    }
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(3 * S);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    manager.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("keeps no actor for a registration the store could not take", async () => {
    const { manager, store, file, clock } = setup();
    await recoverNodes(manager, store);
    await manager.register(computeInfo("a"), nodeCtx("a"));
    await store.close();
    await expect(clock.drive(manager.register(computeInfo("b"), nodeCtx("b")))).rejects.toThrow(/closed/);
    expect(manager.nodeCount).toBe(1);
    expect(() => manager.resolve("b", true)).toThrow("node not found: b");
    const reopened = setup({ file });
    expect((await reopened.store.readAll()).map((e) => e.stream)).toEqual(["node-a"]);
  });

  it("recovers events stored with labels that the new label rule refuses", async () => {
    const { store, file } = setup();
    const info = { ...computeInfo("old"), Labels: { "bad key": "a b", "Upper.Case/x": "-" } };
    const metadata = {
      time: "2025-06-01T00:00:00.000Z",
      actor: { type: "node" as const, id: "old" },
      correlationId: "c",
      causationId: "c",
    };
    await store.append(
      "node-old",
      [
        encodeNodeEvent(
          {
            type: "NodeRegistered",
            data: { NodeID: "old", NodeType: "Compute", Info: info, Membership: "APPROVED", Lifecycle: 1 },
          },
          metadata,
          "00000000-0000-4000-8000-000000000001",
        ),
      ],
      "no_stream",
    );
    const { manager } = setup({ file });
    await expect(recoverNodes(manager, store)).resolves.toMatchObject({ nodes: 1, events: 1 });
    await expect(manager.register(computeInfo("old"), nodeCtx("old"))).resolves.toMatchObject({
      events: [{ type: "NodeInfoUpdated" }],
    });
  });
});

describe("NodeManager grace after a start (docs/nodes.md, Health after a restart)", () => {
  /** Three HEALTHY compute nodes, one of them rejected, stored by a first orchestrator; then it stops. */
  async function storedFleet(clock: ManualClock): Promise<string> {
    const first = setup({ clock });
    await recoverNodes(first.manager, first.store);
    for (const id of ["n1", "n2", "n3"]) await first.manager.register(computeInfo(id), nodeCtx(id));
    await first.manager.operatorAction("reject", "n3", opCtx());
    await clock.advance(10 * S);
    first.manager.stop();
    await first.store.close();
    opened.splice(0);
    return first.file;
  }

  function restarted(clock: ManualClock, file: string, reconnectLoginsPerSecond: number) {
    const store = new SqliteEventStore(file);
    // Started: not listening until the test says the orchestrator takes the nodes' reports.
    const listening = new Listening(clock);
    const manager = new NodeManager({
      store,
      clock,
      logger: silentLogger,
      manualApproval: false,
      thresholds: new HealthThresholds({ disconnectMs: 1 * M, unknownMs: 5 * M }, []),
      reconnectLoginsPerSecond,
      listening,
    });
    opened.push({ store, manager });
    return { store, manager, listening };
  }

  it("holds health changes until it listens, however long start-up takes, then counts silence from the spread's end", async () => {
    const clock = new ManualClock();
    const file = await storedFleet(clock);
    await clock.advance(10 * M); // the orchestrator was down
    // Two connected nodes (the rejected one is not): at 1 login/s they spread over 2 s.
    const { store, manager, listening } = restarted(clock, file, 1);
    await recoverNodes(manager, store);
    expect(manager.reconnectSpreadMs()).toBe(2 * S);
    // Recovery, read models, publisher: a start-up longer than a DisconnectTimeout blames nobody.
    await clock.advance(3 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    listening.begin();
    const listenedAt = clock.now();
    expect(manager.silenceCountsFrom).toBe(listenedAt + 2 * S);
    // n2 reconnects at the very end of the spread and heartbeats on; n1 never comes back.
    await clock.advance(2 * S);
    await manager.heartbeat("n2");
    await clock.advance(30 * S);
    await manager.heartbeat("n2");
    await clock.advance(30 * S - 1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    expect(clock.now()).toBe(listenedAt + 2 * S + 1 * M);
    expect(await types(store, "n2")).toEqual(["NodeRegistered"]);
    const [, unhealthy] = await store.readStream("node-n1");
    expect(unhealthy!.data).toMatchObject({ LastHeartbeat: null });
  });

  it("gives the same spread when its transport comes back, sized by the nodes connected then", async () => {
    const clock = new ManualClock();
    const file = await storedFleet(clock);
    const { store, manager, listening } = restarted(clock, file, 2);
    await recoverNodes(manager, store);
    listening.begin();
    await clock.advance(30 * S);
    await manager.heartbeat("n1");
    await manager.heartbeat("n2");
    listening.transportDown("embedded nats-server exited");
    await clock.advance(10 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    listening.transportUp();
    const backAt = clock.now();
    expect(manager.silenceCountsFrom).toBe(backAt + 1 * S);
    await clock.advance(31 * S);
    await manager.heartbeat("n2");
    await clock.advance(30 * S - 1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    await clock.advance(1);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    // One node connected now: under a second's worth of logins, no spread.
    expect(manager.reconnectSpreadMs()).toBe(0);
  });

  it("waits for listening even when the transport comes back during start-up", async () => {
    const clock = new ManualClock();
    const file = await storedFleet(clock);
    const { store, manager, listening } = restarted(clock, file, 0);
    listening.transportDown("embedded nats-server exited");
    await recoverNodes(manager, store);
    listening.transportUp();
    await clock.advance(5 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered"]);
    listening.begin();
    await clock.advance(1 * M);
    expect(await types(store, "n1")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
  });
});
