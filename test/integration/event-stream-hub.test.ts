import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { connect } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { sendError } from "../../src/api/error-body.ts";
import { feedFilterOf } from "../../src/api/events/event-feed-query.ts";
import { CATCH_UP_TURN_MS, CLOSE_GRACE_MS } from "../../src/api/events/event-stream-client.ts";
import { eventStreamRoute } from "../../src/api/events/event-stream-route.ts";
import { registerRoutes } from "../../src/api/route.ts";
import type { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { toClusterEvent } from "../../src/projections/cluster-event.ts";
import { ShoalMetrics } from "../../src/metrics/shoal-metrics.ts";
import { eventStreamFigures } from "../../src/orchestrator/modules/event-stream-module.ts";
import { EncodedEvents } from "../../src/projections/encoded-events.ts";
import { storeFilterOf } from "../../src/projections/event-feed/event-feed.ts";
import { EventStreamHub } from "../../src/projections/event-stream/event-stream-hub.ts";
import { NatsEventPublisher } from "../../src/projections/nats-event-publisher.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { metricSamples } from "../support/metric-samples.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { dataIds, openSse, type SseClient } from "../support/sse-client.ts";
import { appendLog, readAllFilteredPages, skewedLog } from "../support/skewed-log.ts";
import { storesPerTest } from "../support/stores-per-test.ts";

/**
 * The event stream's hub and route over a real SQLite store, a real processor host and real HTTP connections; only
 * the clock is fake (keep-alives and the grace before a connection that does not read is dropped).
 */

const PATH = "/api/v1/orchestrator/events/stream";
const stores = storesPerTest("shoal-event-stream-");
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Streaming {
  readonly store: SqliteEventStore;
  readonly hub: EventStreamHub;
  readonly clock: ManualClock;
  readonly url: string;
  readonly cutOffs: () => number;
  /** The connections the server holds open. */
  readonly connections: () => Promise<number>;
}

async function streaming(
  options: {
    ringBytes?: number;
    clientBufferBytes?: number;
    maxBufferedBytes?: number;
    maxClients?: number;
    maxCatchUps?: number;
    before?: number;
    encoded?: EncodedEvents;
    /** A NATS server: the events are published there too, by the publisher, on the same processor host. */
    natsUrl?: string;
  } = {},
): Promise<Streaming> {
  const store = stores();
  if (options.before) await appendLog(store, skewedLog("b", options.before));
  const clock = new ManualClock();
  const deadlines = new DeadlineScheduler(clock);
  const processors = new ProcessorHost({ store, clock, deadlines, logger: silentLogger });
  let cutOffs = 0;
  const hub = new EventStreamHub({
    startAt: await store.headPosition(),
    ringBytes: options.ringBytes ?? 32 * 1024 * 1024,
    keepAliveMs: 15_000,
    maxBufferedBytes: options.maxBufferedBytes ?? 256 * 1024 * 1024,
    onCutOff: () => cutOffs++,
    ...(options.encoded ? { encoded: options.encoded } : {}),
    ...(options.maxCatchUps ? { maxCatchUps: options.maxCatchUps } : {}),
    deadlines,
    logger: silentLogger,
  });
  processors.add(hub);
  if (options.natsUrl !== undefined) {
    const nc = await connect({ servers: options.natsUrl });
    cleanups.push(() => nc.close());
    const publisher = new NatsEventPublisher(nc, store, silentLogger, 64 * 1024 * 1024, {
      clock,
      deadlines,
      ...(options.encoded ? { encoded: options.encoded } : {}),
    });
    await publisher.start();
    processors.add(publisher);
  }
  await processors.start();
  const app: FastifyInstance = Fastify();
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  registerRoutes(app, [
    eventStreamRoute({
      hub,
      store,
      deadlines,
      clock,
      logger: silentLogger,
      clientBufferBytes: options.clientBufferBytes ?? 1024 * 1024,
      maxClients: options.maxClients ?? 100,
      onCutOff: () => cutOffs++,
    }),
  ]);
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(async () => {
    hub.close("the test ended");
    await app.close();
    await processors.stop();
    deadlines.stop();
  });
  const port = (app.server.address() as AddressInfo).port;
  const connections = () =>
    new Promise<number>((resolve, reject) =>
      app.server.getConnections((err, count) => (err ? reject(err) : resolve(count))),
    );
  return { store, hub, clock, url: `http://127.0.0.1:${port}${PATH}`, cutOffs: () => cutOffs, connections };
}

/** Appends `count` generated events (each `padBytes` bigger), in groups sharing commits, as a busy cluster would. */
async function appendMore(store: SqliteEventStore, prefix: string, count: number, padBytes = 0): Promise<void> {
  const pad = "x".repeat(padBytes);
  const log = skewedLog(prefix, count).map(({ stream, event }) => ({
    stream,
    event: padBytes === 0 ? event : { ...event, data: { ...(event.data as object), pad } },
  }));
  await appendLog(store, log, 20);
}

const json = (e: RecordedEvent) => JSON.stringify(toClusterEvent(e));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const stop = (c: SseClient) => cleanups.push(() => c.close());

describe("the event stream", () => {
  it("sends every stored event after `after` once, in store order, from the store and then live, while appends run", async () => {
    // A ring of 64 KiB holds a few hundred events: the switch from the store to the ring happens under appends.
    const s = await streaming({ before: 3000, ringBytes: 64 * 1024 });
    const appending = appendMore(s.store, "live", 3000);
    const client = await openSse(`${s.url}?after=0`);
    stop(client);
    expect(client.status).toBe(200);
    expect(client.response.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    await appending;
    await client.until((m) => m.length >= 6000);
    expect(dataIds(client.messages)).toEqual(range(1, 6000));
    const stored = await s.store.readAll({ after: 0, maxCount: 10_000 });
    expect(client.messages.map((m) => m.data)).toEqual(stored.map(json));
  });

  it("with no start, sends only what is stored after it connected; after=N starts after N", async () => {
    const s = await streaming({ before: 50 });
    const fromHead = await openSse(s.url);
    const fromTen = await openSse(`${s.url}?after=10`);
    stop(fromHead);
    stop(fromTen);
    await appendMore(s.store, "n", 5);
    await fromHead.until((m) => m.length >= 5);
    await fromTen.until((m) => m.length >= 45);
    expect(dataIds(fromHead.messages)).toEqual(range(51, 55));
    expect(dataIds(fromTen.messages)).toEqual(range(11, 55));
  });

  it("a filtered stream sends exactly the feed's selection, through the switch to live", async () => {
    const s = await streaming({ before: 2000, ringBytes: 32 * 1024 });
    const query = { category: "node,execution", actor: ["node", "workflow:jobs"] };
    const client = await openSse(`${s.url}?after=0&category=node,execution&actor=node&actor=workflow:jobs`);
    stop(client);
    await appendMore(s.store, "f", 2000);
    const expected = (
      await readAllFilteredPages(s.store, storeFilterOf(feedFilterOf(query)), {
        after: 0,
        through: await s.store.headPosition(),
        limit: 500,
      })
    ).events;
    expect(expected.length).toBeGreaterThan(100);
    await client.until((m) => m.length >= expected.length);
    // A moment for anything that should not be there to arrive.
    await appendMore(s.store, "g", 1);
    await new Promise((r) => setImmediate(r));
    expect(client.messages.map((m) => m.data)).toEqual(expected.map(json));
  });

  it("a client that reconnects with Last-Event-ID gets every event after it once, whatever `after` says", async () => {
    const s = await streaming({ before: 1000, ringBytes: 64 * 1024 });
    const appending = appendMore(s.store, "r", 1000);
    const first = await openSse(`${s.url}?after=0`);
    await first.until((m) => m.length >= 700);
    first.close();
    // What it had parsed when it went away (chunks already read may still be parsed after).
    const got = dataIds(first.messages);
    const last = String(got.at(-1));
    // An EventSource sends the URL it was opened with again, and the id it got last.
    const second = await openSse(`${s.url}?after=0`, { headers: { "last-event-id": last } });
    stop(second);
    await appending;
    await second.until((m) => Number(m.at(-1)?.id) >= 2000);
    expect([...got, ...dataIds(second.messages)]).toEqual(range(1, 2000));
  });

  it("cuts off a client that does not read, with where to resume, while the others are served; it resumes from there with nothing lost or twice", async () => {
    const s = await streaming({ clientBufferBytes: 64 * 1024 });
    const reader = await openSse(s.url);
    const sleeper = await openSse(s.url, { paused: true });
    stop(reader);
    stop(sleeper);
    // 16 KiB events, 1,000 of them: far more than the sockets' buffers and the client's bound.
    await appendMore(s.store, "p", 1000, 16 * 1024);
    await reader.until((m) => m.length >= 1000);
    expect(dataIds(reader.messages)).toEqual(range(1, 1000));
    expect(s.cutOffs()).toBe(1);
    expect(s.hub.clients).toBe(1);
    // It reads again within the grace: what was sent before the cut-off, then the last message.
    sleeper.resume();
    await sleeper.ended;
    const resume = sleeper.messages.at(-1)!;
    expect(resume.event).toBe("resume");
    const hint = JSON.parse(resume.data) as { after: number; reason: string };
    expect(hint.reason).toMatch(/did not read/);
    expect(resume.id).toBe(String(hint.after));
    const before = dataIds(sleeper.messages);
    expect(before).toEqual(range(1, hint.after));
    const again = await openSse(s.url, { headers: { "last-event-id": String(hint.after) } });
    stop(again);
    await again.until((m) => Number(m.at(-1)?.id) >= 1000);
    expect([...before, ...dataIds(again.messages)]).toEqual(range(1, 1000));
  });

  it("cuts off the clients holding the most when all of them together hold more than their bound", async () => {
    // Each alone within its own bound (64 MiB), the two together past theirs (256 KiB).
    const s = await streaming({ clientBufferBytes: 64 * 1024 * 1024, maxBufferedBytes: 256 * 1024 });
    const reader = await openSse(s.url);
    const sleepers = [await openSse(s.url, { paused: true }), await openSse(s.url, { paused: true })];
    stop(reader);
    for (const c of sleepers) stop(c);
    await appendMore(s.store, "t", 1000, 16 * 1024);
    await reader.until((m) => m.length >= 1000);
    expect(dataIds(reader.messages)).toEqual(range(1, 1000));
    expect(s.cutOffs()).toBe(2);
    expect(s.hub.clients).toBe(1);
    for (const sleeper of sleepers) {
      sleeper.resume();
      await sleeper.ended;
      const resume = sleeper.messages.at(-1)!;
      expect(resume.event).toBe("resume");
      const hint = JSON.parse(resume.data) as { after: number; reason: string };
      expect(hint.reason).toMatch(/clients together did not read/);
      expect(dataIds(sleeper.messages)).toEqual(range(1, hint.after));
    }
  });

  it("drops the connection of a cut-off client that still does not read once the grace is over", async () => {
    const s = await streaming({ clientBufferBytes: 64 * 1024 });
    const sleeper = await openSse(s.url, { paused: true });
    stop(sleeper);
    await appendMore(s.store, "d", 1000, 16 * 1024);
    await expect.poll(() => s.cutOffs()).toBe(1);
    expect(await s.connections()).toBe(1);
    await s.clock.advance(CLOSE_GRACE_MS - 1);
    expect(await s.connections()).toBe(1);
    await s.clock.advance(1);
    await expect.poll(() => s.connections()).toBe(0);
    // What the kernel had taken still arrives, then the end: the rest, the last message too, went with the connection.
    sleeper.resume();
    await sleeper.ended;
    const ids = dataIds(sleeper.messages);
    expect(ids).toEqual(range(1, ids.length));
    expect(sleeper.messages.at(-1)?.event).toBeUndefined();
  });

  it("sends a keep-alive comment at the interval to a client it sent nothing", async () => {
    const s = await streaming({ before: 3 });
    const client = await openSse(s.url);
    stop(client);
    await expect.poll(() => client.text()).toBe(": events after 3\nid: 3\n\n");
    await s.clock.advance(14_999);
    expect(client.text()).toBe(": events after 3\nid: 3\n\n");
    await s.clock.advance(1);
    await expect.poll(() => client.text()).toBe(": events after 3\nid: 3\n\n: keep-alive\n\n");
  });

  it("sends every client its last message and ends the streams when the hub closes", async () => {
    const s = await streaming({ before: 4 });
    const client = await openSse(s.url);
    s.hub.close("the orchestrator is stopping");
    await client.ended;
    expect(client.messages).toEqual([
      { id: "4", event: "resume", data: JSON.stringify({ after: 4, reason: "the orchestrator is stopping" }) },
    ]);
  });

  it("refuses a start that is not a position or beyond the newest event, a page parameter, and clients past the limit", async () => {
    const s = await streaming({ before: 5, maxClients: 1 });
    const get = async (query: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${s.url}${query}`, { headers });
      return { status: res.status, body: (await res.json()) as { Message: string } };
    };
    expect(await get("", { "last-event-id": "five" })).toMatchObject({
      status: 400,
      body: { Message: expect.stringMatching(/Last-Event-ID.*not a position/) },
    });
    expect(await get("", { "last-event-id": "6" })).toMatchObject({
      status: 400,
      body: { Message: expect.stringMatching(/Last-Event-ID: position 6 is beyond the newest event \(5\)/) },
    });
    expect(await get("?after=9")).toMatchObject({
      status: 400,
      body: { Message: expect.stringMatching(/after: position 9 is beyond/) },
    });
    expect(await get("?limit=5")).toMatchObject({ status: 400, body: { Message: expect.stringMatching(/limit/) } });
    expect(await get("?type=NoSuchThing")).toMatchObject({
      status: 400,
      body: { Message: expect.stringMatching(/type: unknown event type/) },
    });
    const one = await openSse(s.url);
    stop(one);
    expect(await get("")).toMatchObject({ status: 503, body: { Message: expect.stringMatching(/MaxClients/) } });
  });

  it.each([
    ["each event is encoded once", 8 * 1024 * 1024],
    ["an event no longer held is encoded again", 4 * 1024],
  ])("publishes on NATS the JSON each stream message carries, from one encoding: %s", async (_case, heldBytes) => {
    const nats = await TestNatsServer.start();
    cleanups.push(() => nats.stop());
    const listener = await connect({ servers: nats.url });
    cleanups.push(() => listener.close());
    const published = new Map<number, Uint8Array>();
    listener.subscribe("shoal.events.>", {
      callback: (_err, m) => published.set(Number(m.headers?.get("Shoal-Position")), m.data),
    });
    await listener.flush();
    const encoded = new EncodedEvents(heldBytes);
    // A ring of 16 KiB: a client that comes later reads the store, not the ring.
    const s = await streaming({ encoded, natsUrl: nats.url, ringBytes: 16 * 1024 });
    const live = await openSse(s.url);
    stop(live);
    await appendMore(s.store, "w", 500);
    await live.until((m) => m.length >= 500);
    await expect.poll(() => published.size).toBe(500);
    const stored = (await s.store.readAll({ after: 0, maxCount: 1000 })).map(json);
    expect(live.messages.map((m) => m.data)).toEqual(stored);
    for (const m of live.messages) expect(Buffer.from(published.get(Number(m.id))!).toString()).toBe(m.data);
    const later = await openSse(`${s.url}?after=0`);
    stop(later);
    await later.until((m) => m.length >= 500);
    expect(later.messages.map((m) => m.data)).toEqual(stored);
    if (heldBytes > 1024 * 1024) expect(encoded.encodings).toBe(500);
    else expect(encoded.encodings).toBeGreaterThan(500 + 400);
  });

  it("lets MaxCatchUps clients read the store at a time, the others in line; each gets every event once", async () => {
    const s = await streaming({ ringBytes: 64 * 1024, maxCatchUps: 1 });
    // 4 KiB events: far more than a connection that does not read can take.
    await appendMore(s.store, "c", 3000, 4096);
    // The first in line does not read: it holds the one turn until it gives it up, its page unread.
    const sleeper = await openSse(`${s.url}?after=0`, { paused: true });
    stop(sleeper);
    await expect.poll(() => s.hub.bufferedClientBytes).toBeGreaterThan(1024 * 1024);
    const starts = [0, 0, 100, 1500, 2999];
    const clients = await Promise.all(starts.map((after) => openSse(`${s.url}?after=${after}`)));
    clients.forEach(stop);
    await expect.poll(() => s.hub.catchUps.waiting).toBe(starts.length);
    // /metrics shows the one reading the store and the line behind it.
    const metrics = new ShoalMetrics(silentLogger);
    metrics.registerCollector("eventStream", () => eventStreamFigures(s.hub));
    const turns = async () => {
      const samples = metricSamples(await metrics.scrape());
      return [samples.get("shoal_event_stream_catching_up"), samples.get("shoal_event_stream_catch_up_waiting")];
    };
    expect(await turns()).toEqual([1, starts.length]);
    await new Promise((r) => setTimeout(r, 100));
    expect(clients.map((c) => dataIds(c.messages).length)).toEqual(starts.map(() => 0));
    await s.clock.advance(CATCH_UP_TURN_MS);
    const appending = appendMore(s.store, "l", 500);
    for (const [i, client] of clients.entries()) {
      await client.until((m) => Number(m.at(-1)?.id) >= 3500);
      expect(dataIds(client.messages)).toEqual(range(starts[i]! + 1, 3500));
    }
    await appending;
    sleeper.resume();
    await sleeper.until((m) => Number(m.at(-1)?.id) >= 3500);
    expect(dataIds(sleeper.messages)).toEqual(range(1, 3500));
    expect([s.hub.catchUps.taken, s.hub.catchUps.waiting, s.cutOffs()]).toEqual([0, 0, 0]);
    expect(await turns()).toEqual([0, 0]);
  });
});
