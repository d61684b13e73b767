import { performance } from "node:perf_hooks";
import { connect, type KV, type NatsConnection } from "nats";
import { describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { MIN_LEASE_TTL_MS } from "../../src/cluster/cluster-settings.ts";
import { LeaseTable } from "../../src/cluster/lease-table.ts";
import { Ownership, type Owned, type OwnershipListener } from "../../src/cluster/ownership.ts";
import { partitionOf } from "../../src/cluster/partition-of.ts";
import { Presence } from "../../src/cluster/presence.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";

const nats = natsPerSuite();
let buckets = 0;

const bucket = (ttl: number): Promise<KV> => nats.nc.jetstream().views.kv(`leases-${++buckets}`, { ttl, history: 1 });

class Recorder implements OwnershipListener {
  readonly events: string[] = [];
  readonly epochs = new Map<number, number>();
  gained(owned: Owned, epoch: number): void {
    this.events.push(`+${label(owned)}`);
    if ("partition" in owned) this.epochs.set(owned.partition, epoch);
  }
  lost(owned: Owned, why: string): void {
    this.events.push(`-${label(owned)}:${why}`);
  }
}
const label = (o: Owned) => ("partition" in o ? `p${o.partition}` : `d:${o.duty}`);

const PARTITIONS = 8;
const TICK_MS = 1_000;

/**
 * One orchestrator's ownership over `kv`. `ticks`: "by-test" calls tick() itself (its presence is started here),
 * "own" calls start(), which starts its presence and ticks on `deadlines` as the manual clock moves.
 */
async function owner(
  kv: KV,
  name: string,
  clock: ManualClock,
  { elapsed = () => clock.now(), ttlMs = 10_000, conn = nats.nc, ticks = "by-test" as "by-test" | "own" } = {},
) {
  const table = new LeaseTable({ kv, owner: name, ttlMs, safetyMs: ttlMs / 5, elapsed });
  const presence = new Presence({
    nc: conn,
    subject: `members.${(await kv.status()).bucket}`,
    owner: name,
    forgetAfterMs: ttlMs,
    elapsed,
  });
  if (ticks === "by-test") presence.start();
  const listener = new Recorder();
  const deadlines = new DeadlineScheduler(clock);
  const ownership = new Ownership({
    table,
    presence,
    partitions: PARTITIONS,
    duties: ["publisher"],
    tickMs: TICK_MS,
    clock,
    deadlines,
    listener,
    log: silentLogger,
  });
  return { ownership, listener, table, presence, deadlines };
}

async function until(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A listener's gains and losses of partitions (not duties), in order. */
const partitionEvents = (events: readonly string[]) => events.filter((e) => /^[+-]p/.test(e));

/**
 * Three owners `a-<suffix>/1`, `b-…`, `c-…` ticked by the test until they share the eight partitions 3, 3 and 2;
 * `crashing` is c's own connection, for a test to close as a crash would.
 */
async function threeSharing(
  kv: KV,
  clock: ManualClock,
  suffix: string,
  { ttlMs = 10_000, crashing = nats.nc }: { ttlMs?: number; crashing?: NatsConnection } = {},
) {
  const owners = [
    await owner(kv, `a-${suffix}/1`, clock, { ttlMs }),
    await owner(kv, `b-${suffix}/1`, clock, { ttlMs }),
    await owner(kv, `c-${suffix}/1`, clock, { ttlMs, conn: crashing }),
  ] as const;
  for (const o of owners) await o.ownership.tick();
  await until(() => owners.every((o) => o.presence.count() === 3));
  for (const o of owners) await o.ownership.tick();
  expect(owners.map((o) => ownedPartitions(o.ownership).length)).toEqual([3, 3, 2]);
  return owners;
}

/** The most partitions held at once, from a listener's gains and losses in order. */
function mostHeld(events: readonly string[]): number {
  let held = 0;
  let most = 0;
  for (const e of partitionEvents(events)) most = Math.max(most, (held += e.startsWith("+") ? 1 : -1));
  return most;
}

const ownedPartitions = (o: Ownership) => [...Array(PARTITIONS).keys()].filter((p) => o.ownsPartition(p));

/**
 * Moves the clock a tick at a time until `done` holds: each owner's next tick is armed when its last one has
 * finished its round trips to the bucket, in real time, so each step waits a little for them.
 */
async function ticksUntil(clock: ManualClock, done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20 && !done(); i++) {
    await clock.advance(TICK_MS);
    await until(done, 500).catch(() => undefined);
  }
  if (!done()) throw new Error(`not after 20 ticks: ${what}`);
}

describe("partition ownership over a JetStream key-value bucket", () => {
  it("gives a lease back even when the answer to its last renewal was lost", async () => {
    const kv = await bucket(10_000);
    const table = new LeaseTable({
      kv,
      owner: "a-9",
      ttlMs: 10_000,
      safetyMs: 2_000,
      elapsed: () => performance.now(),
    });
    const lease = await table.acquire("partitions.0");
    if (!lease) throw new Error("the lease was not taken");
    const unanswered = lease.revision;
    expect(await table.renew(lease)).toBe("renewed");
    // The renewal landed, but as far as the owner knows its revision is the one before.
    lease.revision = unanswered;
    await table.release(lease);
    expect((await kv.get("partitions.0"))?.operation).toBe("DEL");
  });

  it("shares the partitions fairly between members, with every partition owned once", async () => {
    const kv = await bucket(10_000);
    const clock = new ManualClock();
    const a = await owner(kv, "a-1", clock);
    const b = await owner(kv, "b-1", clock);

    await a.ownership.tick();
    expect(ownedPartitions(a.ownership)).toHaveLength(8);
    expect(a.ownership.ownsDuty("publisher")).toBe(true);

    await b.ownership.tick(); // b joins: nothing free yet
    expect(ownedPartitions(b.ownership)).toEqual([]);
    await until(() => a.presence.count() === 2);
    await a.ownership.tick(); // a sees two members and hands four back
    await b.ownership.tick();

    const mine = ownedPartitions(a.ownership);
    const theirs = ownedPartitions(b.ownership);
    expect(mine).toHaveLength(4);
    expect(theirs).toHaveLength(4);
    expect([...mine, ...theirs].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(a.listener.events.filter((e) => e.endsWith(":handed-off"))).toHaveLength(4);
    // The duty stays with its first owner: one publisher in the cluster.
    expect(b.ownership.ownsDuty("publisher")).toBe(false);
    // A later owner of a partition has a higher epoch than the earlier one.
    for (const p of theirs) expect(b.listener.epochs.get(p)).toBeGreaterThan(a.listener.epochs.get(p) ?? Infinity);
    await a.ownership.stop();
    await b.ownership.stop();
  });

  it("a restarted orchestrator beside one holding its share takes at most its share; nothing moves twice", async () => {
    const kv = await bucket(10_000);
    const clock = new ManualClock();
    const [a, b, c] = await threeSharing(kv, clock, "7");
    // A deploy stops b and c; b comes back at once, c does not: a and the new b share the eight partitions.
    const since = a.listener.events.length;
    const freed = [...ownedPartitions(b.ownership), ...ownedPartitions(c.ownership)];
    await b.ownership.stop();
    await c.ownership.stop();
    const restarted = await owner(kv, "b-7/2", clock);
    // The newcomer asks who is there as it starts: both know of each other before either ticks.
    await until(() => a.presence.count() === 2 && restarted.presence.count() === 2);
    for (const o of [restarted, a, restarted, a, restarted]) await o.ownership.tick();

    expect(ownedPartitions(restarted.ownership)).toHaveLength(4);
    expect(ownedPartitions(a.ownership)).toHaveLength(4);
    // Never more than its share at any moment, and nothing handed back: each freed partition moved once.
    expect(mostHeld(restarted.listener.events)).toBe(4);
    const moves = partitionEvents([...a.listener.events.slice(since), ...restarted.listener.events]);
    expect(moves.sort()).toEqual(freed.map((p) => `+p${p}`).sort());
    await a.ownership.stop();
    await restarted.ownership.stop();
  });

  it("an orchestrator restarted after a crash replaces its former self: the others hand nothing back", async () => {
    const kv = await bucket(2_000);
    const clock = new ManualClock();
    const crashing = await connect({ servers: nats.url });
    const [a, b, c] = await threeSharing(kv, clock, "8", { ttlMs: 2_000, crashing });
    const since = [a, b].map((o) => o.listener.events.length);
    const orphaned = ownedPartitions(c.ownership);
    // c dies without a word (kill -9) and its NodeID comes back under a new start before its leases ran out.
    await crashing.close();
    const restarted = await owner(kv, "c-8/2", clock, { ttlMs: 2_000 });
    await until(() => restarted.presence.count() === 3);
    // Three members, not four: a and b keep their share of three and hand nothing to the newcomer.
    expect([a, b].map((o) => o.presence.count())).toEqual([3, 3]);
    for (let i = 0; i < 50 && ownedPartitions(restarted.ownership).length < orphaned.length; i++) {
      for (const o of [a, b, restarted]) await o.ownership.tick();
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ownedPartitions(restarted.ownership).sort()).toEqual(orphaned.sort());
    expect([a, b].map((o, i) => partitionEvents(o.listener.events.slice(since[i])))).toEqual([[], []]);
    expect(mostHeld(restarted.listener.events)).toBe(orphaned.length);
    for (const o of [a, b, restarted]) await o.ownership.stop();
  });

  it("stops acting when the lease runs out on its own clock, before the bucket could give it away", async () => {
    const kv = await bucket(10_000);
    const clock = new ManualClock();
    const a = await owner(kv, "a-2", clock);
    await a.ownership.tick();
    expect(a.ownership.ownsPartition(3)).toBe(true);

    // No tick runs (the process is starved or paused); the safety margin is 2 s of the 10 s TTL.
    await clock.advance(7_999);
    expect(a.ownership.ownsPartition(3)).toBe(true);
    await clock.advance(1);
    expect(a.ownership.ownsPartition(3)).toBe(false);
    expect(a.ownership.epochOf(3)).toBeUndefined();
    expect(a.listener.events.filter((e) => e.endsWith(":expired"))).toHaveLength(9);

    // The next tick finds its renewals refused as expired and takes the partitions again, under new epochs.
    const before = new Map(a.listener.epochs);
    await a.ownership.tick();
    expect(ownedPartitions(a.ownership)).toHaveLength(8);
    for (const [p, epoch] of before) expect(a.listener.epochs.get(p)).toBeGreaterThan(epoch);
    await a.ownership.stop();
  });

  it("a graceful stop hands everything over at once; an owner paused past its TTL finds it all taken", async () => {
    const kv = await bucket(1_000);
    const clock = new ManualClock();
    const elapsed = () => performance.now();
    const a = await owner(kv, "a-3", clock, { elapsed, ttlMs: 1_000 });
    const b = await owner(kv, "b-3", clock, { elapsed, ttlMs: 1_000 });

    await a.ownership.tick();
    await until(() => b.presence.count() === 2);
    await a.ownership.stop();
    await until(() => b.presence.count() === 1);
    await b.ownership.tick();
    expect(ownedPartitions(b.ownership)).toHaveLength(8);

    const c = await owner(kv, "c-3", clock, { elapsed, ttlMs: 1_000 });
    // b is paused (no renewals) until the bucket has expired its leases; c takes them.
    const deadline = performance.now() + 10_000;
    for (;;) {
      await c.ownership.tick();
      if (ownedPartitions(c.ownership).length === 8 || performance.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(ownedPartitions(c.ownership)).toHaveLength(8);
    expect(ownedPartitions(b.ownership)).toEqual([]);
    await b.ownership.tick(); // b runs again: nothing of its old leases comes back to it
    expect(b.listener.events.filter((e) => /:(expired|taken)$/.test(e))).toHaveLength(9);
    for (const [p, epoch] of b.listener.epochs) expect(c.listener.epochs.get(p)).toBeGreaterThan(epoch);
    await b.ownership.stop();
    await c.ownership.stop();
  });
});

describe("partition ownership on its own ticks (start)", () => {
  /** Entity ids spread over every partition. */
  const entities = [...Array(64).keys()].map((i) => `job-${i}`);

  /** Two owners started one after the other, each ticking on the manual clock, once they share the partitions. */
  async function sharing(suffix: string) {
    const kv = await bucket(10_000);
    const clock = new ManualClock();
    const a = await owner(kv, `a-${suffix}`, clock, { ticks: "own" });
    const b = await owner(kv, `b-${suffix}`, clock, { ticks: "own" });
    a.ownership.start();
    // Nothing happens until the clock reaches its first tick.
    expect(ownedPartitions(a.ownership)).toEqual([]);
    await clock.advance(0);
    await until(() => ownedPartitions(a.ownership).length === PARTITIONS && a.ownership.ownsDuty("publisher"));
    expect(entities.every((id) => a.ownership.ownsEntity(id))).toBe(true);
    b.ownership.start();
    await ticksUntil(
      clock,
      () => ownedPartitions(a.ownership).length === PARTITIONS / 2 && ownedPartitions(b.ownership).length === 4,
      "a hands half back and b takes it",
    );
    return { kv, clock, a, b };
  }

  it("takes the fair share; ownsEntity and epochOf follow the partitions held", async () => {
    const { kv, clock, a, b } = await sharing("5");
    const mine = ownedPartitions(a.ownership);
    expect([...mine, ...ownedPartitions(b.ownership)].sort()).toEqual([...Array(PARTITIONS).keys()]);
    for (const id of entities) {
      const p = partitionOf(id, PARTITIONS);
      expect(a.ownership.ownsEntity(id), id).toBe(mine.includes(p));
      expect(b.ownership.ownsEntity(id), id).toBe(!mine.includes(p));
    }
    // Both own some of these entities: the ids reach every partition.
    expect(new Set(entities.map((id) => partitionOf(id, PARTITIONS))).size).toBe(PARTITIONS);
    for (let p = 0; p < PARTITIONS; p++) {
      const [holder, other] = mine.includes(p) ? [a, b] : [b, a];
      expect(holder.ownership.epochOf(p), `partition ${p}`).toBe(holder.listener.epochs.get(p));
      expect(other.ownership.epochOf(p), `partition ${p}`).toBeUndefined();
    }
    // Renewed on every tick: the clock runs far past the leases' 8 s on this clock and they still hold.
    const key = `partitions.${mine[0]}`;
    const revision = async () => (await kv.get(key))?.revision ?? 0;
    for (let i = 0; i < 12; i++) {
      const before = await revision();
      // Its next tick is armed once the last one finished its round trips: only then can the clock reach it.
      await until(() => a.deadlines.has("cluster:ownership-tick"));
      await clock.advance(TICK_MS);
      for (let tries = 0; (await revision()) <= before; tries++) {
        expect(tries, `renewal ${i}`).toBeLessThan(200);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    expect(ownedPartitions(a.ownership)).toEqual(mine);
    expect(a.listener.events.filter((e) => e.endsWith(":expired"))).toEqual([]);
    await a.ownership.stop();
    await b.ownership.stop();
  });

  it("stop() hands everything back at once and ticks no more; the other takes it all on its own ticks", async () => {
    const { kv, clock, a, b } = await sharing("6");
    const mine = ownedPartitions(a.ownership);
    await a.ownership.stop();
    expect(a.listener.events.filter((e) => e.endsWith(":stopped")).sort()).toEqual(
      [...mine.map((p) => `-p${p}:stopped`), "-d:publisher:stopped"].sort(),
    );
    expect(ownedPartitions(a.ownership)).toEqual([]);
    expect(a.ownership.ownsDuty("publisher")).toBe(false);
    expect(entities.some((id) => a.ownership.ownsEntity(id))).toBe(false);
    expect(mine.map((p) => a.ownership.epochOf(p))).toEqual(mine.map(() => undefined));
    // Given back in the bucket (deleted), not left to run out there; and no tick or expiry armed any more.
    for (const p of mine) expect((await kv.get(`partitions.${p}`))?.operation, `partition ${p}`).toBe("DEL");
    expect(a.deadlines.size).toBe(0);
    const events = a.listener.events.length;

    await until(() => b.presence.count() === 1);
    await ticksUntil(
      clock,
      () => ownedPartitions(b.ownership).length === PARTITIONS && b.ownership.ownsDuty("publisher"),
      "b takes every partition and the duty",
    );
    expect(entities.every((id) => b.ownership.ownsEntity(id))).toBe(true);
    // a, stopped, took nothing back meanwhile.
    expect(a.listener.events).toHaveLength(events);
    await b.ownership.stop();
  });
});

/**
 * Twice the shortest lease an operator may set: on a loaded 2-core machine the election and the first renewal after
 * it have taken more than 8 s, and the test is about the leases outliving the election, not about its speed.
 */
const r3TtlMs = 2 * MIN_LEASE_TTL_MS;

describe("partition ownership on a three-server NATS cluster", { timeout: r3TtlMs + 30_000 }, () => {
  it("keeps every lease, under the same epochs, while the bucket's leader server is killed", async () => {
    const cluster = await TestNatsCluster.start();
    const conn = await connect({ servers: cluster.urls, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    try {
      const kv = await conn
        .jetstream()
        .views.kv("leases-r3", { ttl: r3TtlMs, history: 1, replicas: 3, timeout: 1_000 });
      const clock = new ManualClock();
      const a = await owner(kv, "a-4", clock, { elapsed: () => performance.now(), conn, ttlMs: r3TtlMs });
      const takenAt = performance.now();
      await a.ownership.tick();
      expect(ownedPartitions(a.ownership)).toHaveLength(8);
      const epochs = new Map(a.listener.epochs);

      const info = await (await conn.jetstreamManager()).streams.info("KV_leases-r3");
      const leader = info.cluster?.leader;
      expect(leader).toMatch(/^n[123]$/);
      cluster.kill(leader!);

      // Renewals go unanswered until the other two elect a new leader (seconds); the leases stay valid meanwhile
      // (each tick checks them on their own clock), and renewals land again before they could run out.
      const renewedSince = async (p: number) => {
        const entry = await kv.get(`partitions.${p}`).catch(() => null);
        return entry !== null && entry.revision > (epochs.get(p) ?? Infinity);
      };
      while (!(await renewedSince(3))) {
        expect(performance.now() - takenAt, "no renewal landed within the lease's TTL").toBeLessThan(r3TtlMs);
        await a.ownership.tick();
        expect(ownedPartitions(a.ownership)).toHaveLength(8);
        await new Promise((r) => setTimeout(r, 250));
      }
      await a.ownership.tick();
      expect(ownedPartitions(a.ownership)).toHaveLength(8);
      expect(a.listener.events.filter((e) => e.startsWith("-"))).toEqual([]);
      expect(a.listener.epochs).toEqual(epochs);
      await a.ownership.stop();
    } finally {
      await conn.close();
      await cluster.stop();
    }
  });
});
