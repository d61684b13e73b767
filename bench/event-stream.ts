/**
 * The HTTP event stream (GET /api/v1/orchestrator/events/stream) under load: N subscribers connected while events
 * are appended at a rate, on the components `shoal serve` runs it with: a SQLite store in a temporary directory, the
 * processor host following it, the event stream hub, and the route on Fastify. The subscribers run in a process of
 * their own (bench/support/sse-subscribers.ts), which counts what each receives on the bytes and, for `timed` of
 * them, reads each event's append time from its data.
 *
 * Every 10 ms the events due are appended in one append (100 at most under way at once, as many actors append at
 * once). Each event carries its append time (`t`, epoch ms, taken just before store.append) and is a node event, so
 * every subscriber (no filter) selects it. A subscriber cut off for not reading is not reconnected: it counts as one
 * that did not receive every event. After `seconds` of appends at `rate` events/s the bench waits until every
 * subscriber reached the head (or `drainSeconds` pass) and reads:
 * - every subscriber received every event: how many received all, and the events missing in total;
 * - append → receipt, p50 and p99, over the timed subscribers' events (both clocks are this machine's);
 * - the streaming process's RSS growth: its peak during the run (sampled every 500 ms) over its RSS with every
 *   subscriber connected and nothing appended yet. Only the streaming side: the orchestrator's other read models
 *   are not in this process;
 * - beside them (parameters), the CPU share during the appends of the streaming process's main thread (the event
 *   loop that appends, follows the store and writes to every connection: 1.00 is all of it) and of the
 *   subscribers' process, and the append rate achieved.
 *
 * Targets (issue): 1,000 subscribers at 2,000 events/s, every subscriber receives every event, p99 ≤ 100 ms, RSS
 * growth ≤ 100 MB.
 *
 *   npm run bench -- --only event-stream [--set event-stream.subscribers=1000] [--set event-stream.rate=2000]
 *     [--set event-stream.seconds=30] [--set event-stream.timed=20]
 *   npx tsx bench/event-stream.ts [subscribers] [rate] [seconds]
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import pino from "pino";
import { systemClock } from "../src/actors/clock.ts";
import { DeadlineScheduler } from "../src/actors/deadline-scheduler.ts";
import { sendError } from "../src/api/error-body.ts";
import { eventStreamRoute } from "../src/api/events/event-stream-route.ts";
import { registerRoutes } from "../src/api/route.ts";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../src/events/store/event-store.ts";
import { ENCODED_EVENTS_BYTES, EncodedEvents } from "../src/projections/encoded-events.ts";
import { EventStreamHub } from "../src/projections/event-stream/event-stream-hub.ts";
import { ProcessorHost } from "../src/projections/processor-host.ts";
import { runStandalone, setting, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { type RunningChild, startChild } from "./support/child-process.ts";
import { processCpuMs, threadCpuMs } from "./support/process-cpu.ts";

const SUBSCRIBERS = join(import.meta.dirname, "support/sse-subscribers.ts");
const logger = pino({ level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** The smallest last id any subscriber received, from the child's newest progress line. */
function progressOf(output: string): number {
  const lines = output.match(/^progress (\d+)$/gm);
  return lines === null ? 0 : Number(lines.at(-1)!.slice("progress ".length));
}

async function reportOf(
  child: RunningChild,
): Promise<{ received: number[]; lastIds: number[]; latenciesMs: number[] }> {
  child.child.kill("SIGUSR2");
  for (let i = 0; i < 200; i++) {
    const at = child.output().indexOf("report {");
    const end = at === -1 ? -1 : child.output().indexOf("\n", at);
    if (end !== -1) return JSON.parse(child.output().slice(at + "report ".length, end)) as never;
    await sleep(50);
  }
  throw new Error(`the subscribers did not report:\n${child.output().slice(-2000)}`);
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const subscribers = setting(options, "event-stream.subscribers", options.quick ? 20 : 1000);
  const rate = setting(options, "event-stream.rate", options.quick ? 200 : 2000);
  const seconds = setting(options, "event-stream.seconds", options.quick ? 3 : 30);
  const timed = Math.min(subscribers, setting(options, "event-stream.timed", 20));
  const drainSeconds = setting(options, "event-stream.drainSeconds", 60);
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-sse-"));
  const store = new SqliteEventStore(join(dir, "shoal.db"));
  const deadlines = new DeadlineScheduler(systemClock);
  const processors = new ProcessorHost({ store, deadlines, logger });
  let cutOffs = 0;
  const hub = new EventStreamHub({
    startAt: await store.headPosition(),
    ringBytes: 32 * 1024 * 1024,
    keepAliveMs: 15_000,
    maxBufferedBytes: 256 * 1024 * 1024,
    onCutOff: () => cutOffs++,
    // As `shoal serve` shares them with the NATS publisher.
    encoded: new EncodedEvents(ENCODED_EVENTS_BYTES),
    deadlines,
    logger,
  });
  processors.add(hub);
  await processors.start();
  const app = Fastify({ logger: false });
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  registerRoutes(app, [
    eventStreamRoute({
      hub,
      store,
      deadlines,
      clock: systemClock,
      logger,
      clientBufferBytes: 1024 * 1024,
      maxClients: subscribers + 10,
      onCutOff: () => cutOffs++,
    }),
  ]);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/orchestrator/events/stream`;
  const child = await startChild(
    process.execPath,
    ["--import", "tsx", SUBSCRIBERS, url, String(subscribers), String(timed)],
    "ready",
    120_000,
  );
  try {
    options.log(`event-stream: ${subscribers} subscribers connected; appending ${rate}/s for ${seconds} s`);
    await sleep(1000);
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 500);
    // Appends every 10 ms, each tick's events in one append (a busy orchestrator's group commits look alike).
    const perTick = rate / 100;
    let appended = 0;
    let owed = 0;
    const inFlight = new Set<Promise<void>>();
    const started = Date.now();
    const cpuBefore = { main: threadCpuMs(process.pid), subscribers: processCpuMs(child.child.pid) };
    let tick = 0;
    while (Date.now() - started < seconds * 1000) {
      owed += perTick;
      const n = Math.floor(owed);
      owed -= n;
      if (n > 0) {
        const t = Date.now();
        const events: NewEvent[] = Array.from({ length: n }, (_, k) => ({
          id: randomUUID(),
          type: "NodeLabelsSet",
          data: { t, i: appended + k, Labels: { zone: "a", rack: String(k % 40) } },
          metadata: { time: new Date(t).toISOString(), actor: { type: "operator", id: "bench" }, reason: "bench" },
        }));
        // Not awaited one by one: a cluster's appends come from many actors at once, and share commits.
        const append = store.append(`node-bench-${tick % 100}`, events, "any").then(() => void inFlight.delete(append));
        inFlight.add(append);
        if (inFlight.size >= 100) await Promise.race(inFlight);
        appended += n;
      }
      tick++;
      const next = started + tick * 10;
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
    }
    await Promise.all(inFlight);
    const appendSeconds = (Date.now() - started) / 1000;
    // Over the appends only: what streaming at this rate costs each side per second.
    const mainCpuShare = (threadCpuMs(process.pid) - cpuBefore.main) / (appendSeconds * 1000);
    const subscribersCpuShare = (processCpuMs(child.child.pid) - cpuBefore.subscribers) / (appendSeconds * 1000);
    const head = await store.headPosition();
    options.log(`event-stream: ${appended} appended in ${appendSeconds.toFixed(1)} s; waiting for every subscriber`);
    const until = Date.now() + drainSeconds * 1000;
    while (progressOf(child.output()) < head && Date.now() < until) await sleep(250);
    const report = await reportOf(child);
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    const complete = report.received.filter((n) => n === appended).length;
    const missing = report.received.reduce((sum, n) => sum + Math.max(0, appended - n), 0);
    const latencies = [...report.latenciesMs].sort((a, b) => a - b);
    const growthMB = (rssPeak - rssBefore) / 1024 / 1024;
    return {
      parameters: {
        subscribers,
        rate,
        seconds,
        timed,
        appended,
        achievedRate: Math.round(appended / appendSeconds),
        cutOffs,
        serverMainThreadCpu: mainCpuShare.toFixed(2),
        subscribersCpu: subscribersCpuShare.toFixed(2),
        load: loadavg()[0]!.toFixed(2),
      },
      figures: [
        {
          name: "subscribers that received every event",
          value: complete,
          unit: "subscribers",
          target: { on: "value", min: subscribers },
          note: `${missing} events missing in total; ${cutOffs} cut off`,
        },
        {
          name: "append → receipt p50",
          value: percentile(latencies, 50),
          unit: "ms",
          note: `${latencies.length} receipts over ${timed} subscribers`,
        },
        {
          name: "append → receipt p99",
          value: percentile(latencies, 99),
          unit: "ms",
          target: { on: "value", max: 100 },
        },
        {
          name: "streaming process RSS growth",
          value: Math.round(growthMB * 10) / 10,
          unit: "MB",
          target: { on: "value", max: 100 },
          note: `${Math.round(rssBefore / 1024 / 1024)} MB with every subscriber connected before the appends`,
        },
      ],
    };
  } finally {
    await child.stop(2_000);
    hub.close("the bench ended");
    await app.close();
    await processors.stop();
    deadlines.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runStandalone(import.meta.url, run, ["event-stream.subscribers", "event-stream.rate", "event-stream.seconds"]);
