import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { accept, fold, refuse, type Decider } from "../../machines/decider.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import type { EntityKind } from "../../src/actors/entity-kind.ts";
import { EntityRegistry } from "../../src/actors/entity-registry.ts";
import { Listening } from "../../src/actors/listening.ts";
import { conflict } from "../../src/errors/shoal-error.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";

/** A lease: the smallest entity with a deadline in its state (what a job's queue timeout will be). */
type LeaseState = { readonly expiresAt: number | undefined };
type LeaseCommand = { readonly type: "Grant"; readonly ttlMs: number } | { readonly type: "Expire" };
type LeaseEvent =
  | { readonly type: "LeaseGranted"; readonly data: { ExpiresAt: number } }
  | { readonly type: "LeaseExpired"; readonly data: { At: number } };

const leaseDecider: Decider<LeaseState, LeaseCommand, LeaseEvent, string> = {
  initialState: () => ({ expiresAt: undefined }),
  decide(command, state, { now }) {
    if (command.type === "Grant") return accept([{ type: "LeaseGranted", data: { ExpiresAt: now + command.ttlMs } }]);
    return state.expiresAt === undefined ? refuse("no lease") : accept([{ type: "LeaseExpired", data: { At: now } }]);
  },
  evolve: (_state, event) =>
    event.type === "LeaseGranted" ? { expiresAt: event.data.ExpiresAt } : { expiresAt: undefined },
  deadlines: (state) =>
    state.expiresAt === undefined ? [] : [{ name: "expiry", at: state.expiresAt, command: { type: "Expire" } }],
};

const leaseKind: EntityKind<LeaseState, LeaseCommand, LeaseEvent, string> = {
  category: "lease",
  decider: leaseDecider,
  encode: (event, metadata, id) => ({ id, type: event.type, data: event.data, metadata }),
  decode: (recorded) => ({ type: recorded.type, data: recorded.data }) as LeaseEvent,
  refusalError: (refusal) => conflict(refusal),
};

const ctx = commandContext({ type: "operator", id: "alice" });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The lease whose expiry judges the holder's silence: it counts only time the orchestrator listened. */
const watchKind: typeof leaseKind = {
  ...leaseKind,
  category: "watch",
  decider: {
    ...leaseDecider,
    deadlines: (state) => (leaseDecider.deadlines?.(state) ?? []).map((d) => ({ ...d, listenMs: 1000 })),
  },
};

function setup(file = join(tempDir(), "shoal.db"), clock = new ManualClock(), listening?: Listening, kind = leaseKind) {
  const store = new SqliteEventStore(file);
  const deadlines = new DeadlineScheduler(clock);
  const options = {
    idleMs: 10_000,
    maxResident: 100,
    logger: silentLogger,
    ...(listening ? { listening } : {}),
  };
  const registry = new EntityRegistry(kind, { store, clock, deadlines, newEventId: randomUUID }, options);
  cleanups.push(
    () => store.close(),
    () => deadlines.stop(),
    () => registry.stop(),
  );
  const types = async (id: string) => (await store.readStream(`${kind.category}-${id}`)).map((e) => e.type);
  return { store, clock, deadlines, registry, types, file };
}

describe("deadlines held in an entity's state", () => {
  it("issue the entity's own command when they pass, once", async () => {
    const { registry, clock, types } = setup();
    await registry.execute("l1", { type: "Grant", ttlMs: 1000 }, ctx);
    await clock.advance(999);
    expect(await types("l1")).toEqual(["LeaseGranted"]);
    await clock.advance(1);
    expect(await types("l1")).toEqual(["LeaseGranted", "LeaseExpired"]);
    await clock.advance(10_000);
    expect(await types("l1")).toEqual(["LeaseGranted", "LeaseExpired"]);
  });

  it("move when the state moves them, and the old instant fires nothing", async () => {
    const { registry, clock, types, deadlines } = setup();
    await registry.execute("l1", { type: "Grant", ttlMs: 1000 }, ctx);
    await clock.advance(500);
    await registry.execute("l1", { type: "Grant", ttlMs: 1000 }, ctx);
    // One lease deadline, moved (besides the registry's idle sweep).
    expect(deadlines.size).toBe(2);
    await clock.advance(600);
    expect(await types("l1")).toEqual(["LeaseGranted", "LeaseGranted"]);
    await clock.advance(400);
    expect(await types("l1")).toEqual(["LeaseGranted", "LeaseGranted", "LeaseExpired"]);
    expect(deadlines.size).toBe(1);
    expect(deadlines.has("idle-sweep/lease")).toBe(true);
  });

  it("outlive the actor's passivation, and are armed again from state after a restart", async () => {
    const first = setup();
    await first.registry.execute("l1", { type: "Grant", ttlMs: 60_000 }, ctx);
    await first.registry.execute("l2", { type: "Grant", ttlMs: 5_000 }, ctx);
    await first.clock.advance(20_000); // l1 idle past idleMs: passivated
    expect(first.registry.peek("l1")).toBeUndefined();
    expect(await first.types("l2")).toEqual(["LeaseGranted", "LeaseExpired"]);

    // A new process on the same store: recovery folds the stream and re-arms from the state.
    const clock = new ManualClock(first.clock.now());
    const second = setup(first.file, clock);
    const recorded = await second.store.readStream("lease-l1");
    second.registry.arm(
      "l1",
      fold(
        leaseDecider,
        "l1",
        recorded.map((r) => ({ event: leaseKind.decode(r), time: r.time })),
      ),
    );
    await clock.advance(39_999);
    expect(await second.types("l1")).toEqual(["LeaseGranted"]);
    await clock.advance(1);
    expect(await second.types("l1")).toEqual(["LeaseGranted", "LeaseExpired"]);
  });
});

describe("deadlines that judge someone's silence (listenMs)", () => {
  it("fire once the orchestrator has listened that long: not while it starts; a start re-arms the wait", async () => {
    const clock = new ManualClock();
    const listening = new Listening(clock);
    const { registry, types, file } = setup(undefined, clock, listening, watchKind);
    await registry.execute("w1", { type: "Grant", ttlMs: 1000 }, ctx);
    // Not listening yet (starting): the instant passes, nothing fires.
    await clock.advance(5000);
    expect(await types("w1")).toEqual(["LeaseGranted"]);
    listening.begin();
    await clock.advance(999);
    expect(await types("w1")).toEqual(["LeaseGranted"]);
    await clock.advance(1);
    expect(await types("w1")).toEqual(["LeaseGranted", "LeaseExpired"]);

    // A restart long after the instant: armed from state, due listenMs after the new process listens.
    await registry.execute("w2", { type: "Grant", ttlMs: 1000 }, ctx);
    const later = new ManualClock(clock.now() + 60_000);
    const relistening = new Listening(later);
    const second = setup(file, later, relistening, watchKind);
    const recorded = await second.store.readStream("watch-w2");
    const events = recorded.map((r) => ({ event: leaseKind.decode(r), time: r.time }));
    second.registry.arm("w2", fold(leaseDecider, "w2", events));
    await later.advance(100);
    relistening.begin();
    await later.advance(999);
    expect(await second.types("w2")).toEqual(["LeaseGranted"]);
    await later.advance(1);
    expect(await second.types("w2")).toEqual(["LeaseGranted", "LeaseExpired"]);
  });

  it("are held while the orchestrator cannot listen (transport down), then wait in full from when it can", async () => {
    const clock = new ManualClock();
    const listening = Listening.begun(clock);
    const { registry, types } = setup(undefined, clock, listening, watchKind);
    await registry.execute("w1", { type: "Grant", ttlMs: 1000 }, ctx);
    await clock.advance(500);
    listening.transportDown("NATS connection lost");
    // The instant passes while the transport is down: held, not fired.
    await clock.advance(3000);
    expect(await types("w1")).toEqual(["LeaseGranted"]);
    listening.transportUp();
    await clock.advance(999);
    expect(await types("w1")).toEqual(["LeaseGranted"]);
    await clock.advance(1);
    expect(await types("w1")).toEqual(["LeaseGranted", "LeaseExpired"]);
  });

  it("without listenMs, or in a registry given no Listening, fire at their instant", async () => {
    const clock = new ManualClock();
    const listening = new Listening(clock);
    const lease = setup(undefined, clock, listening);
    await lease.registry.execute("l1", { type: "Grant", ttlMs: 1000 }, ctx);
    const watch = setup(undefined, clock, undefined, watchKind);
    await watch.registry.execute("w1", { type: "Grant", ttlMs: 1000 }, ctx);
    await clock.advance(1000);
    expect(await lease.types("l1")).toEqual(["LeaseGranted", "LeaseExpired"]);
    expect(await watch.types("w1")).toEqual(["LeaseGranted", "LeaseExpired"]);
  });
});
