import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { DiscardPolicy, connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { ENTITY_EVENTS } from "../../src/events/catalog/entity-events.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../../src/events/streams.ts";
import { NatsEventPublisher } from "../../src/projections/nats-event-publisher.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { EVENTS_STREAM } from "../../src/transport/subjects.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { streamPositions as positionsOn } from "../support/cluster-invariants.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

const MAX_BYTES = 256 * 1024 * 1024;
const queued = (i: number): NewEvent => ({
  id: randomUUID(),
  type: "JobQueued",
  data: { i },
  metadata: { time: new Date().toISOString() },
});

/** `count` job events (published) with a few events of an unpublished category among them; the last position. */
async function appendJobs(store: SqliteEventStore, count: number, perAppend = 250): Promise<number> {
  let position = 0;
  for (let done = 0; done < count; done += perAppend) {
    const n = Math.min(perAppend, count - done);
    await store.append(
      `job-${randomUUID()}`,
      Array.from({ length: n }, (_, i) => queued(done + i)),
      "no_stream",
    );
    position = (await store.append(`internal-${randomUUID()}`, [queued(-1)], "no_stream")).position;
  }
  return position;
}

const streamPositions = async (nc: NatsConnection) => positionsOn(await nc.jetstreamManager());

async function publishedPositions(store: SqliteEventStore): Promise<number[]> {
  return (await store.readAll()).filter((e) => e.stream.startsWith("job-")).map((e) => e.position);
}

describe("NatsEventPublisher on a processor host", () => {
  let nats: TestNatsServer;
  let admin: NatsConnection;
  beforeAll(async () => {
    nats = await TestNatsServer.start();
    admin = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await admin.close();
    await nats.stop();
  });

  async function running(store: SqliteEventStore, logger = silentLogger, ackTimeoutMs?: number) {
    const nc = await connect({ servers: nats.url });
    const publisher = new NatsEventPublisher(nc, store, logger, MAX_BYTES, {
      window: 64,
      ...(ackTimeoutMs === undefined ? {} : { ackTimeoutMs }),
    });
    await publisher.start();
    const host = new ProcessorHost({ store, logger, retryDelayMs: 50, maxRetryDelayMs: 200 });
    const progress = host.add(publisher);
    await host.start();
    return {
      progress,
      stop: async () => {
        await host.stop();
        await nc.close();
      },
    };
  }

  async function freshStream(): Promise<void> {
    const jsm = await admin.jetstreamManager();
    await jsm.streams.delete(EVENTS_STREAM).catch(() => undefined);
  }

  /** A publisher and its host on a manual clock and one deadline heap, over a fresh store and SHOAL_EVENTS. */
  async function onManualClock(ackTimeoutMs: number) {
    await freshStream();
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    const { logger, messages } = capturedLogger();
    const clock = new ManualClock();
    const deadlines = new DeadlineScheduler(clock);
    const nc = await connect({ servers: nats.url });
    const publisher = new NatsEventPublisher(nc, store, logger, MAX_BYTES, { ackTimeoutMs, clock, deadlines });
    await publisher.start();
    const host = new ProcessorHost({ store, logger, clock, deadlines });
    const progress = host.add(publisher);
    await host.start();
    return { store, messages, clock, deadlines, nc, host, progress };
  }

  /** JetStream stores what it gets and answers nothing (no_ack), as when replies are lost; the result undoes it. */
  async function withholdAcks(): Promise<() => Promise<unknown>> {
    const jsm = await admin.jetstreamManager();
    const config = (await jsm.streams.info(EVENTS_STREAM)).config;
    await jsm.streams.update(EVENTS_STREAM, { ...config, no_ack: true });
    return () => jsm.streams.update(EVENTS_STREAM, { ...config, no_ack: false });
  }

  /** Until the publisher has sent and waits for acks on its clock. */
  const awaitingAcks = (deadlines: DeadlineScheduler) =>
    waitFor(
      () => deadlines.has("nats-event-publisher/ack-timeout"),
      10_000,
      () => "the publisher sent and waits for acks",
    );

  it("refuses to start when JetStream refuses the stream (an operator's stream takes its subjects)", async () => {
    await freshStream();
    const jsm = await admin.jetstreamManager();
    await jsm.streams.add({ name: "OPERATORS_OWN", subjects: ["shoal.events.>"] });
    const nc = await connect({ servers: nats.url });
    try {
      const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
      const publisher = new NatsEventPublisher(nc, store, silentLogger, MAX_BYTES);
      await expect(publisher.start()).rejects.toThrow(`refused to set up the cluster-event stream ${EVENTS_STREAM}`);
    } finally {
      await nc.close();
      await jsm.streams.delete("OPERATORS_OWN");
    }
  });

  it("publishes a backlog and live events through the window: each once, in store order; the checkpoint is the last ack", async () => {
    await freshStream();
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    await appendJobs(store, 3_000);
    const { progress, stop } = await running(store);
    const last = await appendJobs(store, 2_000, 50);
    await progress.waitFor(last, 30_000);
    await stop();
    expect(await streamPositions(admin)).toEqual(await publishedPositions(store));
    expect(await store.load("nats-event-publisher")).toBe(last);
    await store.close();
  });

  it("publishes the events of every registered entity kind (ENTITY_EVENTS), under its category, and no other stream's", async () => {
    await freshStream();
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    const { progress, stop } = await running(store);
    const categories = ENTITY_EVENTS.map((events) => events.category);
    let last = 0;
    for (const stream of [...categories.map((c) => `${c}-${randomUUID()}`), `workflow-${randomUUID()}`, "volume-v-1"])
      last = (await store.append(stream, [queued(0)], "no_stream")).position;
    await progress.waitFor(last, 10_000);
    await stop();
    const published = (await store.readAll()).filter((e) => categories.includes(categoryOf(e.stream)));
    expect(published.map((e) => categoryOf(e.stream))).toEqual(categories);
    expect(await streamPositions(admin)).toEqual(published.map((e) => e.position));
    const jsm = await admin.jetstreamManager();
    const subjects: string[] = [];
    for (let seq = 1; seq <= published.length; seq++)
      subjects.push((await jsm.streams.getMessage(EVENTS_STREAM, { seq })).subject);
    expect(subjects).toEqual(
      published.map((e) => `shoal.events.${categoryOf(e.stream)}.${entityIdOf(e.stream)}.JobQueued`),
    );
    await store.close();
  });

  it("keeps publishing when a full window is followed by long runs of unpublished events", async () => {
    // Each round fills the window with published events and then stores many more that are never
    // published (workflow steps): the acknowledged prefix runs past the next event to send, and
    // once the queue is compacted the publisher must still know where to send from.
    await freshStream();
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    const { logger, messages } = capturedLogger();
    const { progress, stop } = await running(store, logger);
    let last = 0;
    for (let round = 0; round < 24; round++) {
      await store.append(
        `job-${randomUUID()}`,
        Array.from({ length: 64 }, (_, i) => queued(i)),
        "no_stream",
      );
      last = (
        await store.append(
          `internal-${randomUUID()}`,
          Array.from({ length: 448 }, () => queued(-1)),
          "no_stream",
        )
      ).position;
    }
    await progress.waitFor(last, 20_000);
    await stop();
    expect(messages("processor failed")).toEqual([]);
    expect(await streamPositions(admin)).toEqual(await publishedPositions(store));
    await store.close();
  });

  it("stops at a refused publish, waits, and resumes after the last acknowledged event without reordering or repeating", async () => {
    await freshStream();
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    const { logger, messages } = capturedLogger();
    const first = await running(store, logger);
    await first.progress.waitFor(await appendJobs(store, 10));
    // JetStream refuses everything past 1,000 messages until the limit is lifted.
    const jsm = await admin.jetstreamManager();
    const config = (await jsm.streams.info(EVENTS_STREAM)).config;
    await jsm.streams.update(EVENTS_STREAM, { ...config, max_msgs: 1_000, discard: DiscardPolicy.New });
    const last = await appendJobs(store, 3_000);
    await waitFor(
      () => messages("could not publish a cluster event").length >= 2,
      20_000,
      () => "the publisher retried the refused publish",
    );
    const stalled = first.progress.position;
    expect(stalled).toBeLessThan(last);
    expect((await jsm.streams.info(EVENTS_STREAM)).state.messages).toBe(1_000);

    await jsm.streams.update(EVENTS_STREAM, config);
    await first.progress.waitFor(last, 30_000);
    await first.stop();
    expect(await streamPositions(admin)).toEqual(await publishedPositions(store));
    await store.close();
  });

  it("re-sends from a stale checkpoint after a crash, and JetStream drops the re-sends", async () => {
    await freshStream();
    const file = join(tempDir(), "shoal.db");
    const store = new SqliteEventStore(file);
    const first = await running(store);
    const published = await appendJobs(store, 1_500);
    await first.progress.waitFor(published);
    await first.stop();
    // As after kill -9 before a checkpoint save: the whole history goes out again.
    await store.save("nats-event-publisher", 0);
    const second = await running(store);
    const last = await appendJobs(store, 500);
    await second.progress.waitFor(last, 30_000);
    await second.stop();
    expect(await streamPositions(admin)).toEqual(await publishedPositions(store));
    await store.close();
  });

  it("treats a publish JetStream never answers as lost: it times out, and resumes in order once acks come back", async () => {
    await freshStream();
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    const { logger, messages } = capturedLogger();
    const first = await running(store, logger, 300);
    await first.progress.waitFor(await appendJobs(store, 10));
    const answerAgain = await withholdAcks();
    const last = await appendJobs(store, 1_000);
    await waitFor(
      () => messages("could not publish a cluster event").length >= 2,
      20_000,
      () => "the publisher timed out waiting for acks",
    );
    expect(first.progress.position).toBeLessThan(last);

    await answerAgain();
    await first.progress.waitFor(last, 30_000);
    await first.stop();
    // Stored while unanswered, then re-sent: the duplicate window kept each once, in order.
    expect(await streamPositions(admin)).toEqual(await publishedPositions(store));
    expect(await store.load("nats-event-publisher")).toBe(last);
    await store.close();
  });

  it("times an unanswered publish out, and pauses before sending again, on the clock it is given", async () => {
    // A minute: the test's own run never lasts that long in real time; only the clock gets there.
    const { store, messages, clock, deadlines, nc, host, progress } = await onManualClock(60_000);
    await progress.waitFor(await appendJobs(store, 10));
    const answerAgain = await withholdAcks();
    const last = await appendJobs(store, 10);
    await awaitingAcks(deadlines);
    const sentAt = clock.now();
    expect(deadlines.at("nats-event-publisher/ack-timeout")).toBe(sentAt + 60_000);
    await clock.advance(59_999);
    expect(messages("could not publish a cluster event")).toEqual([]);
    await clock.advance(1);
    expect(messages("could not publish a cluster event")).toHaveLength(1);
    expect(JSON.stringify(messages("could not publish a cluster event"))).toContain(
      "no acknowledgement from JetStream within 60000 ms",
    );
    // A first failure may be a leader election the retries ride out: a warning, without a stack.
    expect(messages("could not publish a cluster event")[0]).toMatchObject({ level: 40, failingForMs: 0 });
    expect(messages("could not publish a cluster event")[0]).not.toHaveProperty("err");
    // Then a pause of the clock's before it sends again: nothing is sent until it passes.
    expect(deadlines.at("nats-event-publisher/resume")).toBe(clock.now() + 250);
    await clock.advance(250);
    await awaitingAcks(deadlines);
    // Still failing a minute later: an outage, logged as an error with the cause.
    await clock.advance(60_000);
    expect(messages("could not publish a cluster event")).toHaveLength(2);
    expect(messages("could not publish a cluster event")[1]).toMatchObject({ level: 50, failingForMs: 60_250 });
    expect(messages("could not publish a cluster event")[1]).toHaveProperty("err");
    expect(deadlines.at("nats-event-publisher/resume")).toBe(clock.now() + 500);
    await answerAgain();
    expect(progress.position).toBeLessThan(last);
    await clock.advance(500);
    await progress.waitFor(last, 30_000);
    await host.stop();
    await nc.close();
    expect(deadlines.size).toBe(0);
    expect(await streamPositions(admin)).toEqual(await publishedPositions(store));
    await store.close();
  });

  it("stopped while it pauses after a failure, it leaves nothing on the heap and sends nothing more", async () => {
    const { store, messages, clock, deadlines, nc, host } = await onManualClock(1_000);
    const answerAgain = await withholdAcks();
    await appendJobs(store, 10);
    await awaitingAcks(deadlines);
    await clock.advance(1_000);
    expect(deadlines.has("nats-event-publisher/resume")).toBe(true);
    await host.stop();
    expect(deadlines.size).toBe(0);
    const sent = messages("publishing cluster event").length;
    await clock.advance(60_000);
    expect(messages("publishing cluster event")).toHaveLength(sent);
    await nc.close();
    await answerAgain();
    await store.close();
  });
});
