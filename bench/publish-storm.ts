/**
 * Cluster-event publishing under a storm: 100,000 events appended to a real SQLite store while
 * the orchestrator's processor host (node views + the pipelined JetStream publisher) follows
 * it, with a real nats-server and a plain NATS subscriber on shoal.events.>. Measures how long
 * after the last append the last event is acknowledged by JetStream (target: ≤ 5 s) and the
 * stored → received latency seen by the subscriber (acknowledged append → message in hand).
 * Run: npx tsx bench/publish-storm.ts  (STORM_EVENTS, STORM_PER_APPEND override the sizes)
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { connect } from "nats";
import pino from "pino";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../src/events/store/event-store.ts";
import { DEFAULT_PUBLISH_WINDOW, NatsEventPublisher } from "../src/projections/nats-event-publisher.ts";
import { NodeViews } from "../src/projections/node-views.ts";
import { ProcessorHost } from "../src/projections/processor-host.ts";
import { EmbeddedNatsServer } from "../src/transport/embedded-nats-server.ts";
import { freePort } from "./support/free-port.ts";

const EVENTS = Number(process.env.STORM_EVENTS ?? 100_000);
const PER_APPEND = Number(process.env.STORM_PER_APPEND ?? 50);
const MAX_BYTES = 1024 * 1024 * 1024;
const WINDOW = Number(process.env.STORM_WINDOW ?? DEFAULT_PUBLISH_WINDOW);

/** About the size of a node's event (a job's, so the node views skip it and only the publisher works). */
function event(i: number): NewEvent {
  return {
    id: randomUUID(),
    type: "JobQueued",
    data: {
      JobID: `j-${i}`,
      Name: `storm-${i}`,
      Labels: { team: "bench", zone: `z${i % 7}` },
      Tasks: [
        {
          Name: "main",
          Engine: { Type: "docker", Params: { Image: "ubuntu:24.04", Entrypoint: ["/bin/sh", "-c", "echo hello"] } },
        },
      ],
    },
    metadata: {
      time: new Date().toISOString(),
      actor: { type: "system", id: "bench" },
      correlationId: randomUUID(),
      causationId: randomUUID(),
      schemaVersion: 1,
    },
  };
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;
}

export async function run(): Promise<Record<string, number | string>> {
  const logger = pino({ level: "warn" });
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-storm-"));
  const nats = await EmbeddedNatsServer.start({
    host: "127.0.0.1",
    port: await freePort(),
    dir: join(dir, "nats"),
    logger,
  });
  const store = new SqliteEventStore(join(dir, "shoal.db"));
  const nc = await connect({ servers: nats.url });
  const reader = await connect({ servers: nats.url });
  try {
    const publisher = new NatsEventPublisher(nc, store, logger, MAX_BYTES, { window: WINDOW });
    await publisher.start();
    const host = new ProcessorHost({ store, logger });
    const views = new NodeViews();
    host.add({ name: "node-views", handle: (batch) => batch.forEach(views.handleEnvelope) });
    const published = host.add(publisher);
    await host.start();

    // Stored → received: each append's acknowledgement time, by position, against the arrival.
    const storedAt = new Float64Array(EVENTS + 1);
    const latency = new Float64Array(EVENTS);
    let received = 0;
    let first = 0;
    const allReceived = new Promise<void>((resolve) => {
      const sub = reader.subscribe("shoal.events.>", {
        callback: (_err, msg) => {
          const position = Number(msg.headers?.get("Shoal-Position"));
          latency[received++] = performance.now() - (storedAt[position - first] as number);
          if (received === EVENTS) {
            sub.unsubscribe();
            resolve();
          }
        },
      });
    });
    await reader.flush();

    const t0 = performance.now();
    let lastPosition = 0;
    for (let done = 0; done < EVENTS; done += PER_APPEND) {
      const n = Math.min(PER_APPEND, EVENTS - done);
      const { position } = await store.append(
        `job-${randomUUID()}`,
        Array.from({ length: n }, (_, i) => event(done + i)),
        "no_stream",
      );
      const at = performance.now();
      if (first === 0) first = position - n + 1;
      for (let p = position - n + 1; p <= position; p++) storedAt[p - first] = at;
      lastPosition = position;
      // Appends arrive as requests do, one macrotask each: SQLite answers synchronously, so
      // without this the loop would hold the event loop for the whole storm.
      await yieldToEventLoop();
    }
    const lastAppend = performance.now();
    await published.waitFor(lastPosition, 600_000);
    const lastAck = performance.now();
    await allReceived;
    const lastReceived = performance.now();
    await host.stop();

    const sorted = latency.slice(0, received).sort();
    const info = await (await nc.jetstreamManager()).streams.info("SHOAL_EVENTS");
    return {
      events: EVENTS,
      eventsPerAppend: PER_APPEND,
      appendSeconds: +((lastAppend - t0) / 1000).toFixed(2),
      appendedPerSecond: Math.round(EVENTS / ((lastAppend - t0) / 1000)),
      lastAppendToLastAckMs: Math.round(lastAck - lastAppend),
      lastAppendToLastReceivedMs: Math.round(lastReceived - lastAppend),
      publishedPerSecond: Math.round(EVENTS / ((lastAck - t0) / 1000)),
      storedToReceivedP50Ms: +percentile(sorted, 50).toFixed(1),
      storedToReceivedP99Ms: +percentile(sorted, 99).toFixed(1),
      storedToReceivedMaxMs: +(sorted[sorted.length - 1] as number).toFixed(1),
      jetStreamMessages: info.state.messages,
      target: "last append → last ack ≤ 5000 ms",
    };
  } finally {
    await reader.close();
    await nc.close();
    await store.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await run();
  for (const [k, v] of Object.entries(result)) console.log(`${k.padEnd(28)} ${v}`);
}
