import { randomUUID } from "node:crypto";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { NatsEventPublisher } from "../../src/projections/nats-event-publisher.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { EVENTS_STREAM, EVENTS_SUBJECTS } from "../../src/transport/subjects.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { entityPositions, streamPositions } from "../support/cluster-invariants.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { waitFor } from "../support/shoal-process.ts";

let cluster: TestNatsCluster;
let standIn: KurrentStandIn;
let store: EsdbEventStore;
let admin: NatsConnection;
let jsm: JetStreamManager;
const cleanups: (() => Promise<unknown>)[] = [];
/** The nats-server killed by the first test (it led SHOAL_EVENTS), until one brings it back. */
let killed: string | undefined;

beforeAll(async () => {
  [cluster, standIn] = await Promise.all([TestNatsCluster.start(), KurrentStandIn.start()]);
  store = await EsdbEventStore.open(standIn.url);
  admin = await connect({ servers: cluster.urls });
  // Waits out a leader election rather than the client's 5 s default.
  jsm = await admin.jetstreamManager({ timeout: 20_000 });
}, 60_000);
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await admin?.close();
  await store?.close();
  await standIn?.close();
  await cluster?.stop();
});

/** `count` job events, in appends of ten, as an orchestrator's store takes them. */
async function appendJobEvents(count: number): Promise<void> {
  for (let done = 0; done < count; done += 10) {
    const events: NewEvent[] = Array.from({ length: 10 }, (_, i) => ({
      id: randomUUID(),
      type: "JobQueued",
      data: { i: done + i },
      metadata: { time: new Date().toISOString() },
    }));
    await store.append(`job-${randomUUID()}`, events, "no_stream");
  }
}

/** Until SHOAL_EVENTS holds one message per stored entity event; then what it holds and what it must, in order. */
async function publishedAndStored(): Promise<{ published: number[]; stored: number[] }> {
  const stored = entityPositions(await store.readAll());
  await waitFor(
    async () => (await jsm.streams.info(EVENTS_STREAM).catch(() => undefined))?.state.messages === stored.length,
    30_000,
    () => `SHOAL_EVENTS holds the ${stored.length} stored entity events`,
  );
  return { published: await streamPositions(jsm), stored };
}

it("has Replicas copies in cluster mode; events stored after its leader died arrive, each once, in order", async () => {
  const orchestrator = await startOrchestrator(
    orchestratorConfig(cluster.urls.join(","), {
      NodeID: "orch-r3",
      "EventStore.URL": standIn.url,
      "Orchestrator.Cluster.Enabled": true,
      "Orchestrator.Auth.Token": "join-me",
      "Orchestrator.NATS.JetStreamMaxStore": 64 * 1024 * 1024,
    }),
    silentLogger,
  );
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= orchestrator.stop());
  cleanups.push(stop);
  const info = await jsm.streams.info(EVENTS_STREAM);
  // Orchestrator.Cluster.Replicas is 3 unless set.
  expect(info.config.num_replicas).toBe(3);

  await appendJobEvents(100);
  const before = await publishedAndStored();
  expect(before.published).toEqual(before.stored);

  const leader = (await jsm.streams.info(EVENTS_STREAM)).cluster?.leader;
  expect(leader).toBeDefined();
  killed = leader as string;
  cluster.kill(killed);

  await appendJobEvents(100);
  const after = await publishedAndStored();
  expect(after.stored.length).toBe(before.stored.length + 100);
  expect(after.published).toEqual(after.stored);
  const now = await jsm.streams.info(EVENTS_STREAM);
  expect(now.cluster?.leader).not.toBe(leader);
  // What follows checks publishers of its own: this one's must not recreate the stream behind them.
  await stop();
}, 90_000);

it("keeps an existing stream's copies, saying how to change them; refuses a size no server can hold", async () => {
  // Left by the first test with 3 copies; one of the three servers may be down, so it is not moved on every start.
  const nc = await connect({ servers: cluster.urls });
  cleanups.push(() => nc.close());
  const { logger, messages } = capturedLogger();
  const publisher = new NatsEventPublisher(nc, store, logger, 64 * 1024 * 1024, { replicas: 1 });
  await publisher.start();
  await publisher.flush();
  expect((await jsm.streams.info(EVENTS_STREAM)).config.num_replicas).toBe(3);
  const warned = messages("nats stream edit SHOAL_EVENTS --replicas 1");
  expect(warned.map((m) => [m.replicas, m.configured])).toEqual([[3, 1]]);

  await jsm.streams.delete(EVENTS_STREAM);
  const tooLarge = new NatsEventPublisher(nc, store, silentLogger, 2 ** 50, { replicas: 1 });
  await expect(tooLarge.start()).rejects.toThrow(/on each of its 1 copies, and the servers' JetStream storage cannot/);
}, 60_000);

it("starts while JetStream cannot make the stream, retries, and publishes what waited once it is there", async () => {
  cluster.revive(killed as string);
  await cluster.waitForJetStream();
  // The stream is gone, and asked for more copies than the cluster has servers: JetStream cannot place them.
  expect(await jsm.streams.info(EVENTS_STREAM).catch(() => undefined)).toBeUndefined();
  const nc = await connect({ servers: cluster.urls });
  cleanups.push(() => nc.close());
  const { logger, messages } = capturedLogger();
  const publisher = new NatsEventPublisher(nc, store, logger, 64 * 1024 * 1024, { replicas: 5 });
  await publisher.start();
  expect(messages("could not check or create the cluster-event stream yet")).toHaveLength(1);
  const host = new ProcessorHost({ store, logger, retryDelayMs: 50, maxRetryDelayMs: 200 });
  host.add(publisher);
  await host.start();
  cleanups.push(() => host.stop());

  const from = (await store.readAll()).at(-1)?.position ?? 0;
  await appendJobEvents(50);
  await waitFor(
    () => messages("could not recreate the cluster-event stream").length >= 2,
    30_000,
    () => "the publisher retries making the stream, saying so",
  );
  // An operator makes it with the copies the cluster can hold; the publisher keeps them and publishes into it.
  // Asked again until answered, as an operator would: the stream's first leader election can outlast a request's 5 s
  // on a loaded machine (the server revived above is still catching up). A request that timed out may still have made
  // it, and the publisher then sets its limits on it, so an add of the bare config is refused from then on: the
  // stream being there with its three copies is the answer too.
  const made = async () => (await jsm.streams.info(EVENTS_STREAM).catch(() => undefined))?.config.num_replicas === 3;
  await waitFor(
    () =>
      jsm.streams.add({ name: EVENTS_STREAM, subjects: [EVENTS_SUBJECTS], num_replicas: 3 }).then(
        () => true,
        () => made(),
      ),
    30_000,
    () => "JetStream makes the stream the operator asks for",
  );
  const stored = entityPositions((await store.readAll()).filter((e) => e.position > from));
  expect(stored).toHaveLength(50);
  await waitFor(
    async () => (await jsm.streams.info(EVENTS_STREAM)).state.messages === stored.length,
    30_000,
    () => "SHOAL_EVENTS holds what waited",
  );
  expect(await streamPositions(jsm)).toEqual(stored);
  const info = await jsm.streams.info(EVENTS_STREAM);
  expect(info.config).toMatchObject({ num_replicas: 3, deny_purge: true, deny_delete: true });
}, 60_000);
