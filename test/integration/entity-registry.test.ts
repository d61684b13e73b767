import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { EntityRegistry } from "../../src/actors/entity-registry.ts";
import { nodeKind } from "../../src/actors/node-kind.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";

const ctx = commandContext({ type: "operator", id: "alice" });
const register = (id: string) => ({ type: "Register" as const, info: computeInfo(id), manualApproval: true });

const stores: SqliteEventStore[] = [];
const registries: { stop(): void }[] = [];
afterEach(async () => {
  for (const r of registries.splice(0)) r.stop();
  for (const s of stores.splice(0)) await s.close();
});

function setup(options: { idleMs?: number; maxResident?: number; file?: string } = {}) {
  const file = options.file ?? join(tempDir(), "shoal.db");
  const store = new SqliteEventStore(file);
  stores.push(store);
  const clock = new ManualClock();
  const deadlines = new DeadlineScheduler(clock);
  const registry = new EntityRegistry(
    nodeKind,
    { store, clock, deadlines, newEventId: randomUUID },
    {
      idleMs: options.idleMs ?? 60_000,
      maxResident: options.maxResident ?? 1000,
      logger: silentLogger,
    },
  );
  registries.push(registry);
  return { store, clock, deadlines, registry, file };
}

describe("EntityRegistry", () => {
  it("drops the idle actors a lost partition picks, and reads their streams again on their next command", async () => {
    const { registry } = setup();
    for (const id of ["n1", "n2", "n3"]) await registry.execute(id, register(id), ctx);
    expect(registry.dropWhere((id) => id !== "n2")).toBe(2);
    expect(registry.residentCount).toBe(1);
    expect(registry.peek("n1")).toBeUndefined();
    expect(registry.peek("n2")).toBeDefined();
    const loaded = registry.loaded;
    await registry.execute("n1", { type: "Approve" }, ctx);
    expect(registry.loaded).toBe(loaded + 1);
  });

  it("loads an actor from its stream on first use and decides on what was stored", async () => {
    const first = setup();
    await first.registry.execute("n1", register("n1"), ctx);
    await first.registry.execute("n1", { type: "Approve" }, ctx);
    const second = setup({ file: first.file });
    expect(second.registry.residentCount).toBe(0);
    await expect(second.registry.execute("n1", { type: "Approve" }, ctx)).rejects.toMatchObject({
      kind: "Conflict",
      message: "node n1 already approved",
    });
    const result = await second.registry.execute("n1", { type: "Reject" }, ctx);
    expect(result).toMatchObject({ revision: 2, events: [{ type: "NodeRejected", data: { Previous: "APPROVED" } }] });
    expect(second.registry.loaded).toBe(1);
  });

  it("loads one actor for concurrent first commands to the same id, and runs them one at a time", async () => {
    const { registry, store } = setup();
    const results = await Promise.allSettled([
      registry.execute("n1", register("n1"), ctx),
      registry.execute("n1", { type: "Approve" }, ctx),
      registry.execute("n1", { type: "Approve" }, ctx),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(registry.loaded).toBe(1);
    expect((await store.readStream("node-n1")).map((e) => e.type)).toEqual(["NodeRegistered", "NodeApproved"]);
  });

  it("skips reading a stream the caller knows no event of; one another writer stored meanwhile is read on the append's conflict, and decided on again", async () => {
    const { registry, store } = setup();
    // Unseen and truly new: registered from the initial state, with no read of the empty stream.
    const [fresh] = await registry.executeWithState("n1", register("n1"), ctx, undefined, true);
    expect(fresh).toMatchObject({ revision: 0, events: [{ type: "NodeRegistered" }] });
    // Another writer registered and approved n2; this registry never saw it.
    const other = setup({ file: store.file });
    await other.registry.execute("n2", register("n2"), ctx);
    await other.registry.execute("n2", { type: "Approve" }, ctx);
    const [result, state] = await registry.executeWithState("n2", register("n2"), ctx, undefined, true);
    // Decided again on the stored state: n2 stays APPROVED (a fresh registration would have made it PENDING), its
    // history untouched.
    expect(result.revision).toBeGreaterThanOrEqual(1);
    expect(state).toMatchObject({ registered: true, membership: "APPROVED" });
    const stored = (await store.readStream("node-n2")).map((e) => e.type);
    expect(stored.slice(0, 2)).toEqual(["NodeRegistered", "NodeApproved"]);
    expect(stored.filter((t) => t === "NodeRegistered")).toHaveLength(1);
  });

  it("lists an actor loaded without a read like any other: resident, evicted, and loaded again from its stream", async () => {
    const { registry } = setup({ maxResident: 1 });
    await registry.executeWithState("a", register("a"), ctx, undefined, true);
    expect(registry.peek("a")).toBeDefined();
    await registry.executeWithState("b", register("b"), ctx, undefined, true);
    registry.sweep();
    expect(registry.peek("a")).toBeUndefined();
    await expect(registry.execute("a", { type: "Approve" }, ctx)).resolves.toMatchObject({ revision: 1 });
    expect(registry.peek("a")).toBeDefined();
    expect(registry.loaded).toBe(3);
  });

  it("keeps no actor for a new id whose command stored nothing", async () => {
    const { registry } = setup();
    await expect(registry.execute("ghost", { type: "Approve" }, ctx)).rejects.toMatchObject({ kind: "NotFound" });
    expect(registry.residentCount).toBe(0);
  });

  it("passivates actors idle for idleMs, and the next command reloads the same state", async () => {
    const { registry, clock } = setup({ idleMs: 10_000 });
    for (const id of ["a", "b", "c"]) await registry.execute(id, register(id), ctx);
    await clock.advance(6_000);
    await registry.execute("a", { type: "Approve" }, ctx);
    await clock.advance(6_000);
    registry.sweep();
    expect(registry.residentCount).toBe(1);
    expect(registry.passivated).toBe(2);
    await expect(registry.execute("b", { type: "Approve" }, ctx)).resolves.toMatchObject({ revision: 1 });
    await expect(registry.execute("b", { type: "Approve" }, ctx)).rejects.toMatchObject({ kind: "Conflict" });
    expect(registry.loaded).toBe(4);
  });

  it("sweeps idle actors as a deadline of the one heap: the clock passing passivates them, and stop ends the sweeps", async () => {
    const { registry, clock, deadlines } = setup({ idleMs: 10_000 });
    const t0 = clock.now();
    // Every idleMs / 2, on the heap the registry was given: no timer of its own.
    expect(deadlines.at("idle-sweep/node")).toBe(t0 + 5_000);
    expect(clock.pendingTimers).toBe(1);
    for (const id of ["a", "b"]) await registry.execute(id, register(id), ctx);
    await clock.advance(5_000);
    await registry.execute("a", { type: "Approve" }, ctx);
    expect(registry.residentCount).toBe(2);
    // b idle since t0, a since t0 + 5 s: the sweep at t0 + 10 s drops b; a goes at the one after.
    await clock.advance(5_000);
    expect(registry.peek("b")).toBeUndefined();
    expect(registry.peek("a")).toBeDefined();
    await clock.advance(5_000);
    expect(registry.residentCount).toBe(0);
    expect(registry.passivated).toBe(2);
    registry.stop();
    expect(deadlines.has("idle-sweep/node")).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("holds at most maxResident actors, dropping the longest idle first", async () => {
    const { registry, clock } = setup({ maxResident: 2 });
    for (const id of ["a", "b", "c", "d"]) {
      await registry.execute(id, register(id), ctx);
      await clock.advance(10);
    }
    registry.sweep();
    expect(registry.residentCount).toBe(2);
    expect(registry.peek("a")).toBeUndefined();
    expect(registry.peek("d")).toBeDefined();
  });

  it("runs a resident actor's queued commands and catch-ups in the order given; a refusal in the middle stops none after it", async () => {
    const { registry, store } = setup();
    await registry.execute("n1", register("n1"), ctx);
    const actor = await registry.get("n1");
    // Another writer on the same store: the refresh queued between the commands must see it.
    const other = setup({ file: store.file });
    await other.registry.execute("n1", { type: "Approve" }, ctx);
    const results = await Promise.allSettled([
      registry.execute("n1", { type: "Reject" }, ctx),
      actor.refresh(),
      registry.execute("n1", { type: "Approve" }, ctx),
      registry.execute("n1", { type: "Approve" }, ctx),
      registry.execute("n1", { type: "Reject" }, ctx),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({
      kind: "Conflict",
      message: "node n1 already approved",
    });
    expect((await store.readStream("node-n1")).map((e) => e.type)).toEqual([
      "NodeRegistered",
      "NodeApproved",
      "NodeRejected",
      "NodeApproved",
      "NodeRejected",
    ]);
    expect(actor.idle).toBe(true);
    expect(actor.currentRevision).toBe(4);
  });

  it("never passivates an actor with a command under way", async () => {
    const { registry } = setup({ idleMs: 0 });
    await registry.execute("a", register("a"), ctx);
    const actor = await registry.get("a");
    const pending = actor.execute({ type: "Approve" }, ctx);
    registry.sweep();
    expect(registry.peek("a")).toBe(actor);
    await pending;
    registry.sweep();
    expect(registry.peek("a")).toBeUndefined();
  });

  it("enforces maxResident on every load, dropping the least recently used idle actor, not only at the sweep", async () => {
    const { registry } = setup({ maxResident: 2 });
    await registry.execute("a", register("a"), ctx);
    await registry.execute("b", register("b"), ctx);
    await registry.execute("a", { type: "Approve" }, ctx); // a is now the most recently used
    await registry.execute("c", register("c"), ctx);
    expect(registry.residentCount).toBe(2);
    expect(registry.peek("b")).toBeUndefined();
    expect(registry.peek("a")).toBeDefined();
    expect(registry.peek("c")).toBeDefined();
    expect(registry.passivated).toBe(1);
  });

  it("is never over maxResident after a storm of loads, and evicts no actor with a command under way", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `n${i}`);
    const first = setup();
    for (const id of ids) await first.registry.execute(id, register(id), ctx);
    const { registry, store } = setup({ file: first.file, maxResident: 5 });
    const busy = await registry.get("n0");
    await new Promise((resolve) => setImmediate(resolve));
    // n0's approval waits for the store's group commit (the next turn of the event loop) while every other actor loads.
    const approving = registry.execute("n0", { type: "Approve" }, ctx);
    // Each caller asks for the actor, then gives it a command (as the node manager does): the load's continuation comes
    // later.
    const storm = Promise.allSettled(
      ids.slice(1).map((id) => registry.get(id).then(() => registry.execute(id, { type: "Approve" }, ctx))),
    );
    await Promise.all(ids.slice(1).map((id) => registry.get(id)));
    expect(busy.idle).toBe(false);
    expect(registry.peek("n0")).toBe(busy);
    await expect(approving).resolves.toMatchObject({ revision: 1 });
    expect((await storm).every((r) => r.status === "fulfilled")).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(registry.residentCount).toBeLessThanOrEqual(5);
    for (const id of ids)
      expect((await store.readStream(`node-${id}`)).map((e) => e.type)).toEqual(["NodeRegistered", "NodeApproved"]);
    // One actor per id throughout: each was loaded once, n0's never twice.
    expect(registry.loaded).toBe(ids.length);
  });

  it("reloads an evicted actor to the very state it had", async () => {
    const { registry } = setup({ maxResident: 1 });
    await registry.execute("a", register("a"), ctx);
    await registry.execute("a", { type: "Reject" }, ctx);
    const before = registry.peek("a")?.state;
    await registry.execute("b", register("b"), ctx);
    expect(registry.peek("a")).toBeUndefined();
    const reloaded = await registry.get("a");
    expect(reloaded.state).toEqual(before);
    expect(reloaded.currentRevision).toBe(1);
    await expect(registry.execute("a", { type: "Reject" }, ctx)).rejects.toMatchObject({
      kind: "Conflict",
      message: "node a already rejected",
    });
  });
});
