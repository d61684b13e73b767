import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import type { EventStore, NewEvent, StoreSubscription } from "../../src/events/store/event-store.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import type { Processor } from "../../src/projections/processor.ts";
import { ProcessorHost, type ProcessorHostOptions } from "../../src/projections/processor-host.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { waitFor } from "../support/shoal-process.ts";

const tick = (i: number): NewEvent => ({
  id: randomUUID(),
  type: "Ticked",
  data: { i },
  metadata: { time: new Date().toISOString() },
});

/** `count` events over `count / perAppend` streams, one append (one commit) per stream. */
async function appendTicks(store: EventStore, count: number, perAppend = 500): Promise<number> {
  let position = 0;
  for (let done = 0; done < count; done += perAppend) {
    const n = Math.min(perAppend, count - done);
    position = (
      await store.append(
        `tick-${randomUUID()}`,
        Array.from({ length: n }, (_, i) => tick(done + i)),
        "no_stream",
      )
    ).position;
  }
  return position;
}

/** A processor that records what it was given; `gate`, while set, holds handle() open. */
class Recorder implements Processor {
  readonly seen: number[] = [];
  readonly batches: EventEnvelope[][] = [];
  gate: Promise<void> | undefined;
  failNext = 0;

  constructor(
    readonly name: string,
    readonly checkpoints?: SqliteEventStore,
  ) {}

  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    if (this.gate) await this.gate;
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error(`${this.name} failed on purpose`);
    }
    this.batches.push([...batch]);
    for (const e of batch) this.seen.push(e.position);
  }
}

const stores: SqliteEventStore[] = [];
const hosts: ProcessorHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
  for (const s of stores.splice(0)) await s.close();
});

function openStore(file = join(tempDir(), "shoal.db")): SqliteEventStore {
  const store = new SqliteEventStore(file);
  stores.push(store);
  return store;
}

function host(store: EventStore, options: Partial<ProcessorHostOptions> = {}): ProcessorHost {
  const h = new ProcessorHost({ store, logger: silentLogger, ...options });
  hosts.push(h);
  return h;
}

async function storedPositions(store: EventStore): Promise<number[]> {
  return (await store.readAll()).map((e) => e.position);
}

describe("ProcessorHost", () => {
  it("feeds every processor every event once, in store order, from one subscription, with one envelope (decoded once) per event", async () => {
    const store = openStore();
    let subscriptions = 0;
    const counted: EventStore = Object.assign(Object.create(store) as SqliteEventStore, {
      subscribeToAll: (...args: Parameters<EventStore["subscribeToAll"]>) => {
        subscriptions++;
        return store.subscribeToAll(...args);
      },
    });
    await appendTicks(store, 2_000);
    const h = host(counted);
    const a = new Recorder("a");
    const b = new Recorder("b");
    const pa = h.add(a);
    const pb = h.add(b);
    await h.start();
    // Live events after catch-up, among them node events the catalog decodes.
    const node = encodeNodeEvent(
      { type: "NodeApproved", data: { NodeID: "n1", Previous: "PENDING" } },
      { time: new Date().toISOString(), actor: { type: "system", id: "test" }, correlationId: "c", causationId: "c" },
      randomUUID(),
    );
    await store.append("node-n1", [node], "no_stream");
    const last = await appendTicks(store, 2_000, 100);
    await Promise.all([pa.waitFor(last), pb.waitFor(last)]);

    const stored = await storedPositions(store);
    expect(a.seen).toEqual(stored);
    expect(b.seen).toEqual(stored);
    expect(subscriptions).toBe(1);
    expect(pa.position).toBe(last);
    expect(pa.lag).toBe(0);
    const envelopeA = a.batches.flat().find((e) => e.recorded.stream === "node-n1");
    const envelopeB = b.batches.flat().find((e) => e.recorded.stream === "node-n1");
    expect(envelopeA).toBe(envelopeB);
    // Named, not compared whole: the data of a type the node fold does not read is a getter (decoded on use).
    expect({ type: envelopeA?.event?.type, data: envelopeA?.event?.data }).toEqual({
      type: "NodeApproved",
      data: { NodeID: "n1", Previous: "PENDING" },
    });
    expect(envelopeA?.event).toBe(envelopeB?.event);
    expect(a.batches.flat().find((e) => e.recorded.type === "Ticked")?.event).toBeUndefined();
  });

  it("counts as lag what is stored but not yet delivered by the subscription (the store's head as the appends report it)", async () => {
    const store = openStore();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A subscription that has not delivered yet (a slow poll, a reconnect): each delivery waits.
    const slow: EventStore = Object.assign(Object.create(store) as SqliteEventStore, {
      subscribeToAll: (
        options: Parameters<EventStore["subscribeToAll"]>[0],
        handler: Parameters<EventStore["subscribeToAll"]>[1],
      ) =>
        store.subscribeToAll(options, async (event) => {
          await held;
          await handler(event);
        }),
    });
    let appended = 0;
    const h = host(slow, { storeHead: () => appended });
    const p = h.add(new Recorder("views"));
    await h.start();
    appended = await appendTicks(store, 300, 100);

    expect(h.headPosition).toBe(0);
    expect(p.position).toBe(0);
    expect(p.lag).toBe(appended);

    release();
    await p.waitFor(appended);
    expect(p.lag).toBe(0);
  });

  it("keeps a fast processor live while a slow one is stuck, then lets the slow one catch up from the store without gaps or repeats", async () => {
    const store = openStore();
    const { logger, messages } = capturedLogger();
    const h = host(store, { logger, bufferSize: 1_000, batchSize: 100 });
    const fast = new Recorder("fast");
    const slow = new Recorder("slow");
    let open: () => void = () => undefined;
    slow.gate = new Promise((resolve) => (open = resolve));
    const pFast = h.add(fast);
    const pSlow = h.add(slow);
    await h.start();
    const last = await appendTicks(store, 6_000, 200);

    await pFast.waitFor(last);
    expect(pSlow.position).toBe(0);
    expect(pSlow.lag).toBe(last);
    expect(messages("fell behind the shared buffer").map((r) => r.processor)).toEqual(["slow"]);

    slow.gate = undefined;
    open();
    await pSlow.waitFor(last);
    const stored = await storedPositions(store);
    expect(fast.seen).toEqual(stored);
    expect(slow.seen).toEqual(stored);

    // Back on the shared buffer, it gets live events with the others.
    const more = await appendTicks(store, 300, 100);
    await Promise.all([pFast.waitFor(more), pSlow.waitFor(more)]);
    await waitFor(
      () => messages("caught up").length > 0,
      10_000,
      () => "the slow processor rejoined the shared buffer",
    );
    expect(messages("caught up").map((r) => r.processor)).toEqual(["slow"]);
    const live = await appendTicks(store, 100);
    await pSlow.waitFor(live);
    expect(slow.seen).toEqual(await storedPositions(store));
    expect(fast.seen).toEqual(await storedPositions(store));
  });

  it("yields to the event loop during a large catch-up: a 1 ms timer fires long before it ends", async () => {
    const store = openStore();
    const last = await appendTicks(store, 50_000, 1_000);
    const h = host(store);
    const counter = new Recorder("counter");
    const progress = h.add(counter);
    let positionWhenTimerFired: number | undefined;
    let ticks = 0;
    const interval = setInterval(() => ticks++, 1);
    await h.start();
    setTimeout(() => (positionWhenTimerFired = progress.position), 1);
    await progress.waitFor(last, 60_000);
    clearInterval(interval);

    expect(positionWhenTimerFired).toBeDefined();
    expect(positionWhenTimerFired).toBeLessThan(last);
    // Not one late tick: timers kept firing all through the catch-up.
    expect(ticks).toBeGreaterThan(1);
    expect(counter.seen).toEqual(await storedPositions(store));
  });

  it("saves checkpoints every K events or T ms and on stop, never per event, and resumes after its checkpoint", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = openStore(file);
    const clock = new ManualClock();
    await appendTicks(store, 250, 10);
    const positions = await storedPositions(store);
    const h = host(store, { clock, batchSize: 10, checkpointEvery: 100, checkpointIntervalMs: 60_000 });
    const p = new Recorder("audit", store);
    const progress = h.add(p);
    await h.start();
    await progress.waitFor(positions.at(-1));
    // 25 batches of 10: saved after the 10th and the 20th, not after each.
    await waitFor(
      async () => (await store.load("audit")) === positions[199],
      5_000,
      () => "checkpoint at the 200th event",
    );
    expect(await store.load("audit")).toBe(positions[199]);

    // T: the next batch after the interval saves, however few events it has.
    await clock.advance(60_000);
    const one = await appendTicks(store, 1);
    await progress.waitFor(one);
    await waitFor(
      async () => (await store.load("audit")) === one,
      5_000,
      () => "checkpoint after the interval",
    );

    const two = await appendTicks(store, 2);
    await progress.waitFor(two);
    expect(await store.load("audit")).toBe(one);
    await h.stop();
    expect(await store.load("audit")).toBe(two);

    // A new run starts after the checkpoint: nothing it handled is delivered again.
    const again = new Recorder("audit", store);
    const h2 = host(store, { clock });
    const p2 = h2.add(again);
    await h2.start();
    const three = await appendTicks(store, 3);
    await p2.waitFor(three);
    expect(again.seen).toEqual((await storedPositions(store)).filter((x) => x > two));
  });

  it("delivers a batch again only to the processor that failed on it, after a pause", async () => {
    const store = openStore();
    const h = host(store, { retryDelayMs: 20 });
    const flaky = new Recorder("flaky");
    flaky.failNext = 2;
    const steady = new Recorder("steady");
    const pFlaky = h.add(flaky);
    const pSteady = h.add(steady);
    await h.start();
    const last = await appendTicks(store, 1_500, 300);
    await Promise.all([pFlaky.waitFor(last), pSteady.waitFor(last)]);
    const stored = await storedPositions(store);
    expect(flaky.seen).toEqual(stored);
    expect(steady.seen).toEqual(stored);
  });

  it("resubscribes after a store failure and still delivers every position once, in order", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = openStore(file);
    const { logger, messages } = capturedLogger();
    const h = host(store, { logger, resubscribeDelayMs: 50 });
    const p = new Recorder("p");
    const progress = h.add(p);
    await h.start();
    await progress.waitFor(await appendTicks(store, 300, 100));

    // Another connection takes the events table away: every read of the subscription fails.
    const other = new Database(file);
    try {
      other.exec("ALTER TABLE events RENAME TO events_away");
      await waitFor(
        () => messages("processor subscription failed").length >= 2,
        10_000,
        () => "the subscription failed and was retried",
      );
      other.exec("ALTER TABLE events_away RENAME TO events");
    } finally {
      other.close();
    }
    const last = await appendTicks(store, 300, 100);
    await progress.waitFor(last);
    expect(p.seen).toEqual(await storedPositions(store));
  });

  it("resubscribes when the store ends its subscription cleanly (done resolves) without being stopped", async () => {
    const store = openStore();
    const { logger, messages } = capturedLogger();
    const subscriptions: StoreSubscription[] = [];
    // The store's own subscription, ended from outside as a server ending it would: done resolves.
    const ending: EventStore = Object.assign(Object.create(store) as SqliteEventStore, {
      subscribeToAll: (...args: Parameters<EventStore["subscribeToAll"]>) => {
        const sub = store.subscribeToAll(...args);
        subscriptions.push(sub);
        return sub;
      },
    });
    const h = host(ending, { logger, resubscribeDelayMs: 10 });
    const p = new Recorder("p");
    const progress = h.add(p);
    await h.start();
    await progress.waitFor(await appendTicks(store, 50, 50));
    await subscriptions[0]!.stop();
    await waitFor(
      () => subscriptions.length === 2,
      10_000,
      () => "a second subscription",
    );
    expect(messages("processor subscription ended by the store")).toHaveLength(1);
    const last = await appendTicks(store, 50, 50);
    await progress.waitFor(last);
    expect(p.seen).toEqual(await storedPositions(store));
  });

  it("stops promptly while a processor waits out a failure, keeping the other processors' checkpoints", async () => {
    const store = openStore();
    const h = host(store, { retryDelayMs: 60_000 });
    const broken = new Recorder("broken", store);
    broken.failNext = Number.POSITIVE_INFINITY;
    const fine = new Recorder("fine", store);
    const pFine = h.add(fine);
    h.add(broken);
    await h.start();
    const last = await appendTicks(store, 100);
    await pFine.waitFor(last);
    const t0 = Date.now();
    await h.stop();
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await store.load("fine")).toBe(last);
    expect(await store.load("broken")).toBeUndefined();
  });
});

describe("ProcessorHost on the clock", () => {
  /** A host whose every wait is a deadline of `deadlines`, on a clock only the test moves. */
  function clocked(store: EventStore, options: Partial<ProcessorHostOptions> = {}) {
    const clock = new ManualClock();
    const deadlines = new DeadlineScheduler(clock);
    return { clock, deadlines, h: host(store, { clock, deadlines, ...options }) };
  }

  it("bounds waitFor by a deadline on the host's clock", async () => {
    const store = openStore();
    const { clock, deadlines, h } = clocked(store);
    const slow = new Recorder("slow");
    let open: () => void = () => undefined;
    slow.gate = new Promise<void>((resolve) => (open = resolve));
    const progress = h.add(slow);
    await h.start();
    const first = await appendTicks(store, 1);
    let outcome = "waiting";
    const waited = progress.waitFor(first, 5_000).then(
      () => (outcome = "reached"),
      (e: Error) => (outcome = e.message),
    );
    expect(deadlines.at("processor/slow/wait/0")).toBe(clock.now() + 5_000);
    await clock.advance(4_999);
    expect(outcome).toBe("waiting");
    await clock.advance(1);
    await waited;
    expect(outcome).toBe(`processor slow did not reach position ${first} within 5000 ms (it is at 0)`);
    expect(deadlines.has("processor/slow/wait/0")).toBe(false);
    open();
    await progress.waitFor(first);
  });

  it("ends at stop every wait it has not met, leaving nothing on the heap", async () => {
    const store = openStore();
    const { deadlines, h } = clocked(store);
    const progress = h.add(new Recorder("p"));
    await h.start();
    const last = await appendTicks(store, 3);
    await progress.waitFor(last);
    const beyond = progress.waitFor(last + 100, 60_000);
    expect(deadlines.size).toBe(1);
    await h.stop();
    await expect(beyond).rejects.toThrow(`processor p stopped at position ${last}, before reaching ${last + 100}`);
    expect(deadlines.size).toBe(0);
    await expect(progress.waitFor(last + 1)).rejects.toThrow("stopped");
  });

  it("waits out the pause before delivering a failed batch again as a deadline of the host's heap", async () => {
    const store = openStore();
    const { clock, deadlines, h } = clocked(store, { retryDelayMs: 60_000 });
    const flaky = new Recorder("flaky");
    flaky.failNext = 1;
    const progress = h.add(flaky);
    await h.start();
    const last = await appendTicks(store, 10);
    await waitFor(
      () => deadlines.has("processor/flaky/pause"),
      5_000,
      () => "the failed batch waits out its pause",
    );
    expect(deadlines.at("processor/flaky/pause")).toBe(clock.now() + 60_000);
    await clock.advance(59_999);
    expect(flaky.seen).toEqual([]);
    await clock.advance(1);
    await progress.waitFor(last);
    expect(flaky.seen).toEqual(await storedPositions(store));
  });

  it("resubscribes after a store failure when the host's clock says so", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = openStore(file);
    const { logger, messages } = capturedLogger();
    const { clock, deadlines, h } = clocked(store, { logger, resubscribeDelayMs: 30_000 });
    const p = new Recorder("p");
    const progress = h.add(p);
    await h.start();
    await progress.waitFor(await appendTicks(store, 10));
    const other = new Database(file);
    try {
      other.exec("ALTER TABLE events RENAME TO events_away");
      await waitFor(
        () => messages("processor subscription failed").length >= 1,
        10_000,
        () => "the subscription failed",
      );
      expect(deadlines.at("processors/resubscribe")).toBe(clock.now() + 30_000);
      other.exec("ALTER TABLE events_away RENAME TO events");
    } finally {
      other.close();
    }
    const last = await appendTicks(store, 10);
    await clock.advance(29_999);
    expect(progress.position).toBeLessThan(last);
    await clock.advance(1);
    await progress.waitFor(last);
    expect(p.seen).toEqual(await storedPositions(store));
    expect(messages("processor subscription failed")).toHaveLength(1);
  });
});
