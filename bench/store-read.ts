/**
 * Projection rebuild from the SQLite store: how fast `readAll`, paged as the subscription and
 * the recovery read it, streams a 1,000,000-event store into a consumer that looks at every
 * event's type, data and metadata. The store is built with one bulk insert (not through
 * append: that is store-append.ts's figure), with events shaped like Shoal's node events.
 *
 *   npx tsx bench/store-read.ts [--events 1000000] [--page 512] [--rounds 3]
 *
 * Then two folds of the same store into the read model: through the processor host (node views
 * and the node list's index), and as a start without a snapshot folds it (the same lane up to the
 * store's head, then the index and the node manager adopting the views' states). Each both ways,
 * alternately, `--rounds` times (medians): read ahead on the store's reader thread (what they do
 * now), and read on one thread (the path without read-ahead, `readAheadFrom: Infinity`), with the
 * wall ratio between them.
 *
 * Target: >= 300,000 events/s. Also printed: events per CPU-second of the reading
 * process, which other load on the machine does not lower.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pino from "pino";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { systemClock } from "../src/actors/clock.ts";
import { HealthThresholds } from "../src/actors/health-thresholds.ts";
import { NodeManager } from "../src/actors/node-manager.ts";
import { NodeIndex } from "../src/projections/node-index/node-index.ts";
import { NodeViews } from "../src/projections/node-views.ts";
import { ProcessorHost } from "../src/projections/processor-host.ts";
import { virtualNodeInfo } from "../src/sim/virtual-node-info.ts";
import { LinkedRows } from "./support/linked-rows.ts";

export const READ_TARGET_EVENTS_PER_S = 300_000;

const NODES = 100_000;

/**
 * Node events as the node decider writes them, valid for their schemas (the rebuild decodes
 * them): each of 100,000 nodes registers (revision 0) and then changes health; revisions 0, 5,
 * 10… carry the node's whole info (a registration or an info update), so one event in five is
 * large. Event i belongs to node i % 100,000 at revision ⌊i / 100,000⌋.
 */
function eventRow(i: number): [string, string, number, string, string, string, string, number] {
  const index = i % NODES;
  const node = `n-${index}`;
  const revision = Math.floor(i / NODES);
  const time = new Date(1_767_225_600_000 + i).toISOString();
  const metadata = JSON.stringify({
    time,
    actor: { type: "node", id: node },
    correlationId: `c-${i}`,
    causationId: `c-${i}`,
    schemaVersion: 1,
  });
  let type: string;
  let data: unknown;
  if (revision === 0) {
    type = "NodeRegistered";
    data = {
      NodeID: node,
      NodeType: "Compute",
      Info: virtualNodeInfo(node, index),
      Membership: "APPROVED",
      Lifecycle: 1,
    };
  } else if (revision % 5 === 0) {
    type = "NodeInfoUpdated";
    data = { NodeID: node, Info: virtualNodeInfo(node, index + revision), Changed: ["ComputeNodeInfo"] };
  } else if (revision % 2 === 1) {
    type = "NodeBecameUnknown";
    data = { NodeID: node, LastHeartbeat: time, UnknownTimeoutMs: 30_000 };
  } else {
    type = "NodeBecameHealthy";
    data = { NodeID: node, Previous: "UNKNOWN" };
  }
  return [`e-${i}`, `node-${node}`, revision, type, JSON.stringify(data), metadata, time, 1];
}

/**
 * Fills a new store file with `count` events through the store's writer (no fsync per commit), so
 * they carry what an append stores with them: the schema_version and actor columns, the time
 * marks and the hash chain's links.
 */
export async function buildStore(file: string, count: number): Promise<void> {
  await new SqliteEventStore(file).close(); // creates the schema
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const rows = new LinkedRows(db, file);
  for (let i = 0; i < count; i++) rows.add(...eventRow(i));
  rows.flush();
  db.close();
}

interface Phase {
  readonly ms: number;
  /** Every thread of the process (the store's reader thread too). */
  readonly cpuSeconds: number;
  readonly mainCpuSeconds: number;
}

/** A CPU (every thread of the process: the reader thread's too) and wall-clock stopwatch over one phase. */
function stopwatch(): () => Phase {
  const cpu = process.cpuUsage();
  const main = mainThreadCpuSeconds();
  const start = performance.now();
  return () => {
    const { user, system } = process.cpuUsage(cpu);
    return {
      ms: performance.now() - start,
      cpuSeconds: (user + system) / 1e6,
      mainCpuSeconds: mainThreadCpuSeconds() - main,
    };
  };
}

/**
 * The CPU time of this process's main thread alone (Linux: /proc/self/task/<pid>/stat, in clock
 * ticks of 10 ms; NaN elsewhere). On a machine shared with other agents the wall clock says little,
 * and a second thread gets no more of the cores when every core is busy; the event loop's CPU per
 * event is what bounds the wall rate once a core is free for the reader thread.
 */
function mainThreadCpuSeconds(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * A read model rebuilt through the processor host: one store subscription, envelopes decoded
 * once, feeding the node views (decode + the node decider's evolve) from position 0 with the
 * node list's index told once per node when the catch-up is over, as the orchestrator holds it.
 */
async function rebuildThroughViews(
  file: string,
  events: number,
  readAhead: boolean,
): Promise<Phase & { nodes: number }> {
  const store = new SqliteEventStore(file, readAhead ? {} : { readAheadFrom: Number.POSITIVE_INFINITY });
  const [last] = await store.readAll({ after: events - 1, maxCount: 1 });
  const index = new NodeIndex();
  const views = new NodeViews((id, _before, after) => index.update(id, after));
  const host = new ProcessorHost({ store, logger: pino({ level: "warn" }) });
  const progress = host.add({ name: "node-views", handle: (batch) => batch.forEach(views.handleEnvelope) });
  const watch = stopwatch();
  views.hold();
  await host.start();
  await progress.waitFor(last?.position, 600_000);
  await views.release();
  const spent = watch();
  await host.stop();
  await store.close();
  if (index.size !== Math.min(events, NODES)) throw new Error(`the rebuild indexed ${index.size} nodes`);
  return { ...spent, nodes: index.size };
}

/**
 * What a start without a snapshot does: the node views fold every node stream once on the processor host's lane, up
 * to the store's head (the `recover` phase), then the node list's index is built from them and the node manager adopts
 * their states (deadlines and liveness armed for every node).
 */
async function startFold(
  file: string,
  events: number,
  readAhead: boolean,
): Promise<Phase & { recover: Phase; nodes: number }> {
  // The same store read on this thread alone (the path without read-ahead), or read ahead on the store's reader thread.
  const store = new SqliteEventStore(file, readAhead ? {} : { readAheadFrom: Number.POSITIVE_INFINITY });
  const manager = new NodeManager({
    store,
    clock: systemClock,
    logger: pino({ level: "warn" }),
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 3_600_000, unknownMs: 7_200_000 }, []),
  });
  const index = new NodeIndex();
  const views = new NodeViews((id, _before, after) => index.update(id, after));
  const host = new ProcessorHost({ store, logger: pino({ level: "warn" }) });
  const lane = host.add({ name: "node-views", handle: (batch) => batch.forEach(views.handleEnvelope) });
  const watch = stopwatch();
  const head = await store.headPosition();
  views.hold();
  await host.start();
  await lane.waitFor(head, 600_000);
  const recover = watch();
  await views.release();
  manager.adoptRecovered(views.recovered());
  const spent = watch();
  await host.stop();
  manager.stop();
  await store.close();
  if (views.eventsFolded !== events || index.size !== Math.min(events, NODES))
    throw new Error(`recovery folded ${views.eventsFolded} events, indexed ${index.size} nodes`);
  return { ...spent, recover, nodes: index.size };
}

export async function run(
  options: { events?: number; page?: number; rounds?: number } = {},
): Promise<Record<string, number | string>> {
  const events = options.events ?? 1_000_000;
  const rounds = options.rounds ?? 3;
  // The machine is shared: the load around the run says how far its wall clocks can be trusted.
  const loadBefore = loadavg()[0] as number;
  const page = options.page ?? 512;
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-read-"));
  try {
    const file = join(dir, "shoal.db");
    const built = performance.now();
    await buildStore(file, events);
    const buildMs = performance.now() - built;

    const store = new SqliteEventStore(file);
    let read = 0;
    let registrations = 0;
    let checksum = 0;
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let after = 0; ;) {
      const batch = await store.readAll({ after, maxCount: page });
      if (batch.length === 0) break;
      for (const e of batch) {
        // A consumer that uses the whole event, as a projection does.
        if (e.type === "NodeRegistered" || e.type === "NodeInfoUpdated") registrations++;
        checksum += (e.data as { NodeID?: string; Info?: unknown }).Info ? 1 : 0;
        checksum += (e.metadata.time as string).length + e.revision;
        read++;
        after = e.position;
      }
    }
    const readMs = performance.now() - start;
    const { user, system } = process.cpuUsage(cpu);
    await store.close();
    if (read !== events) throw new Error(`read ${read} events of ${events}`);
    const withInfo = Array.from({ length: events }, (_, i) => Math.floor(i / NODES) % 5 === 0).filter(Boolean).length;
    if (registrations !== withInfo || checksum === 0)
      throw new Error(`consumer saw ${registrations} events with node info, not ${withInfo}`);
    // The start-up fold read on one thread and read ahead on the reader thread, alternately (first
    // one, then the other, then the other first), so that both see the same neighbours on average.
    const inline: Awaited<ReturnType<typeof startFold>>[] = [];
    const ahead: Awaited<ReturnType<typeof startFold>>[] = [];
    const hostInline: Phase[] = [];
    const hostAhead: Phase[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        inline.push(await startFold(file, events, false));
        ahead.push(await startFold(file, events, true));
        hostInline.push(await rebuildThroughViews(file, events, false));
        hostAhead.push(await rebuildThroughViews(file, events, true));
      } else {
        ahead.push(await startFold(file, events, true));
        inline.push(await startFold(file, events, false));
        hostAhead.push(await rebuildThroughViews(file, events, true));
        hostInline.push(await rebuildThroughViews(file, events, false));
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const wallRate = (p: Phase) => events / (p.ms / 1000);
    const perCpu = (p: Phase) => events / p.cpuSeconds;
    const perMainCpu = (p: Phase) => events / p.mainCpuSeconds;
    const fold = {
      wall: median(ahead.map(wallRate)),
      cpu: median(ahead.map(perCpu)),
      recoverWall: median(ahead.map((f) => wallRate(f.recover))),
      recoverCpu: median(ahead.map((f) => perCpu(f.recover))),
    };
    const single = {
      wall: median(inline.map(wallRate)),
      cpu: median(inline.map(perCpu)),
      recoverWall: median(inline.map((f) => wallRate(f.recover))),
      recoverCpu: median(inline.map((f) => perCpu(f.recover))),
    };
    const rounded = (x: number) => Math.round(x);
    const rate = Math.round(read / (readMs / 1000));
    // Other processes share the 2 cores; events per second of this process's own CPU time says
    // what the reader itself can do, beside what the wall clock saw.
    const cpuRate = Math.round(read / ((user + system) / 1e6));
    return {
      events: read,
      page,
      buildSeconds: Number((buildMs / 1000).toFixed(1)),
      readSeconds: Number((readMs / 1000).toFixed(2)),
      readAllEventsPerSecond: rate,
      readAllEventsPerCpuSecond: cpuRate,
      target: READ_TARGET_EVENTS_PER_S,
      ratioToTarget: Number((rate / READ_TARGET_EVENTS_PER_S).toFixed(2)),
      rounds,
      loadAverage: `${loadBefore.toFixed(1)}–${(loadavg()[0] as number).toFixed(1)}`,
      rebuildEventsPerSecond: rounded(median(hostAhead.map(wallRate))),
      rebuildEventsPerCpuSecond: rounded(median(hostAhead.map(perCpu))),
      rebuildSingleThreadEventsPerSecond: rounded(median(hostInline.map(wallRate))),
      rebuildSingleThreadEventsPerCpuSecond: rounded(median(hostInline.map(perCpu))),
      rebuildWallRatio: Number((median(hostAhead.map(wallRate)) / median(hostInline.map(wallRate))).toFixed(2)),
      startFoldEventsPerSecond: rounded(fold.wall),
      startFoldEventsPerCpuSecond: rounded(fold.cpu),
      startFoldSingleThreadEventsPerSecond: rounded(single.wall),
      startFoldSingleThreadEventsPerCpuSecond: rounded(single.cpu),
      startFoldWallRatio: Number((fold.wall / single.wall).toFixed(2)),
      recoverEventsPerSecond: rounded(fold.recoverWall),
      recoverEventsPerCpuSecond: rounded(fold.recoverCpu),
      recoverSingleThreadEventsPerSecond: rounded(single.recoverWall),
      recoverSingleThreadEventsPerCpuSecond: rounded(single.recoverCpu),
      recoverWallRatio: Number((fold.recoverWall / single.recoverWall).toFixed(2)),
      recoverEventsPerMainThreadCpuSecond: rounded(median(ahead.map((f) => perMainCpu(f.recover)))),
      recoverSingleThreadEventsPerMainThreadCpuSecond: rounded(median(inline.map((f) => perMainCpu(f.recover)))),
      startFoldEventsPerMainThreadCpuSecond: rounded(median(ahead.map(perMainCpu))),
      startFoldSingleThreadEventsPerMainThreadCpuSecond: rounded(median(inline.map(perMainCpu))),
      rebuildEventsPerMainThreadCpuSecond: rounded(median(hostAhead.map(perMainCpu))),
      rebuildSingleThreadEventsPerMainThreadCpuSecond: rounded(median(hostInline.map(perMainCpu))),
      startFoldRuns: JSON.stringify({
        // [recover ms, recover CPU-s, recover main-thread CPU-s, fold ms, fold CPU-s, fold main-thread CPU-s]
        readAhead: ahead.map((f) =>
          [
            rounded(f.recover.ms),
            f.recover.cpuSeconds,
            f.recover.mainCpuSeconds,
            rounded(f.ms),
            f.cpuSeconds,
            f.mainCpuSeconds,
          ].map((x) => Number(x.toFixed(2))),
        ),
        singleThread: inline.map((f) =>
          [
            rounded(f.recover.ms),
            f.recover.cpuSeconds,
            f.recover.mainCpuSeconds,
            rounded(f.ms),
            f.cpuSeconds,
            f.mainCpuSeconds,
          ].map((x) => Number(x.toFixed(2))),
        ),
        hostReadAhead: hostAhead.map((f) =>
          [rounded(f.ms), f.cpuSeconds, f.mainCpuSeconds].map((x) => Number(x.toFixed(2))),
        ),
        hostSingleThread: hostInline.map((f) =>
          [rounded(f.ms), f.cpuSeconds, f.mainCpuSeconds].map((x) => Number(x.toFixed(2))),
        ),
      }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      events: { type: "string", default: "1000000" },
      page: { type: "string", default: "512" },
      rounds: { type: "string", default: "3" },
    },
  });
  const figures = await run({
    events: Number(values.events),
    page: Number(values.page),
    rounds: Number(values.rounds),
  });
  const n = (key: string) => Number(figures[key]).toLocaleString("en");
  console.log(
    `store readAll (projection rebuild): ${n("readAllEventsPerSecond")} events/s (${n("readAllEventsPerCpuSecond")} per CPU-second) over ${n("events")} events, pages of ${n("page")} (target ${n("target")}/s)`,
  );
  console.log(
    `rebuild through the processor host, the node views and the list's index, read ahead: ${n("rebuildEventsPerSecond")} events/s wall (${n("rebuildEventsPerCpuSecond")} per CPU-second); ` +
      `one thread: ${n("rebuildSingleThreadEventsPerSecond")} events/s (${n("rebuildSingleThreadEventsPerCpuSecond")} per CPU-second); wall ratio ${figures.rebuildWallRatio}`,
  );
  console.log(
    `the start-up catch-up alone, read ahead on the reader thread: ${n("recoverEventsPerSecond")} events/s wall (${n("recoverEventsPerCpuSecond")} per CPU-second of all threads); ` +
      `one thread: ${n("recoverSingleThreadEventsPerSecond")} events/s (${n("recoverSingleThreadEventsPerCpuSecond")} per CPU-second); wall ratio ${figures.recoverWallRatio} (medians of ${n("rounds")})`,
  );
  console.log(
    `events per CPU-second of the main thread (the event loop) — read ahead / one thread: catch-up ${n("recoverEventsPerMainThreadCpuSecond")} / ${n("recoverSingleThreadEventsPerMainThreadCpuSecond")}; ` +
      `start-up fold ${n("startFoldEventsPerMainThreadCpuSecond")} / ${n("startFoldSingleThreadEventsPerMainThreadCpuSecond")}; processor host ${n("rebuildEventsPerMainThreadCpuSecond")} / ${n("rebuildSingleThreadEventsPerMainThreadCpuSecond")}`,
  );
  console.log(
    `start-up fold (catch-up, index built, states adopted), read ahead: ${n("startFoldEventsPerSecond")} events/s wall (${n("startFoldEventsPerCpuSecond")} per CPU-second); ` +
      `one thread: ${n("startFoldSingleThreadEventsPerSecond")} events/s (${n("startFoldSingleThreadEventsPerCpuSecond")} per CPU-second); wall ratio ${figures.startFoldWallRatio}`,
  );
  console.log(JSON.stringify(figures));
}
