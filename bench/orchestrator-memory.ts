/**
 * The orchestrator's own memory with N registered, APPROVED compute nodes reporting as agents do,
 * against the same orchestrator with no nodes, in the same run.
 *
 * One external, open nats-server (this bench's, with JetStream). On it, one after the other:
 *
 * 1. **baseline**: `shoal serve` (the compiled CLI, its own process, SQLite) with no nodes, read
 *    after `baselineSeconds`;
 * 2. **loaded**: the same with N nodes seeded into its store before it starts (NodeRegistered
 *    APPROVED with virtualNodeInfo's shapes, and NodeCredentialBound with a well-formed user
 *    key, through the actor host the orchestrator uses: test/support/seed-nodes.ts); the
 *    publisher's and the workflow's checkpoints are set at the head, as a running orchestrator
 *    would have them. From a few connections of this process every node then heartbeats every
 *    `heartbeatMs` (published, `{NodeID, Sequence}`, as agents do), reports resources every
 *    `resourceMs` and node info every `infoMs` (requests, as agents do; the info is unchanged, so
 *    nothing is stored, but the node's actor is loaded), spread evenly over each interval. It is
 *    read after `steadySeconds` of that (sampled every 5 s meanwhile).
 *
 * The nodes' keys are not enforced here (an open nats-server, few connections): 100,000 node
 * connections cannot be held on this machine (open-file limit 20,000), and they would belong on
 * leafnode servers anyway (docs/performance.md, Fleet). The orchestrator does the same per
 * message either way; its own NATS connection carries the same traffic.
 *
 * What is read, for each: RSS (/proc/<pid>/status), heap used and external (/metrics, and
 * process.memoryUsage() after a full GC from a preloaded probe, bench/support/memory-probe.mjs,
 * which also gives arrayBuffers), the nats-server's RSS. Then, with `snapshot=1`, a heap snapshot
 * of the loaded orchestrator (`--heapsnapshot-signal`), its bytes attributed to owners
 * (bench/support/heap-owners.ts, orchestrator-heap-owners.ts).
 *
 *   npx tsx bench/orchestrator-memory.ts [nodes=100000] [steadySeconds=240] [snapshot=1]
 *   npm run bench -- --only orchestrator-memory --set orchestrator-memory.nodes=100000
 *
 * Knobs: orchestrator-memory.nodes, .heartbeatMs, .resourceMs (0: none), .infoMs (0: none),
 * .steadySeconds, .baselineSeconds, .connections, .disconnectTimeoutMs, .snapshot, .keepSnapshot.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { connect, type NatsConnection } from "nats";
import { resourceReport } from "../src/compute/machine-info.ts";
import { virtualNodeInfo } from "../src/sim/virtual-node-info.ts";
import { decode, encode } from "../src/transport/codec.ts";
import { ProtocolResponse } from "../src/transport/messages.ts";
import { computeSubject } from "../src/transport/subjects.ts";
import { forgetDeletedNodes } from "../src/workflows/forget-deleted-nodes.ts";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { startBenchNats } from "./support/bench-nats.ts";
import { attribute, readHeapSnapshot } from "./support/heap-owners.ts";
import { ORCHESTRATOR_HEAP_OWNERS } from "./support/orchestrator-heap-owners.ts";
import { processCpuMs } from "./support/process-cpu.ts";
import { rssMB } from "./support/process-rss.ts";
import { seedNodes } from "../test/support/seed-nodes.ts";
import { wellFormedUserKey } from "./support/well-formed-user-key.ts";
import { serveOrchestrator, shoalLaunch, type ServedOrchestrator } from "./support/shoal-serve.ts";

export const PROBE = join(import.meta.dirname, "support/memory-probe.mjs");
const TICK_MS = 100;
const SAMPLE_MS = 5_000;
/** Requests (resources, info) in flight at most; beyond it a tick's share is deferred, not dropped. */
const MAX_IN_FLIGHT = 2_000;
const MB = 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** kB fields of /proc/<pid>/status, in MB. */
function procStatus(pid: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (pid === undefined) return out;
  try {
    for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
      const m = /^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem):\s+(\d+) kB/.exec(line);
      if (m) out[m[1]!] = Number(m[2]) / 1024;
    }
  } catch {
    // gone
  }
  return out;
}

export interface ProbeReading {
  readonly before: NodeJS.MemoryUsage;
  readonly after: NodeJS.MemoryUsage;
  /** V8's spaces before the GC: committed (size) and used bytes. */
  readonly spaces: Readonly<Record<string, { readonly size: number; readonly used: number }>>;
}

/** `space committed/used` in MB, the spaces that hold more than 1 MB. */
const spacesLine = (p: ProbeReading) =>
  Object.entries(p.spaces)
    .filter(([, s]) => s.size >= MB)
    .map(([name, s]) => `${name} ${(s.size / MB).toFixed(0)}/${(s.used / MB).toFixed(0)}`)
    .join(", ");

/** Asks the preloaded probe for a full GC and process.memoryUsage() before and after it. */
export async function probe(pid: number): Promise<ProbeReading> {
  const path = join(tmpdir(), `shoal-memory-probe-${pid}.jsonl`);
  // One line per request, complete once its newline is there.
  const written = () => (existsSync(path) ? readFileSync(path, "utf8") : "");
  rmSync(path, { force: true });
  process.kill(pid, "SIGWINCH");
  const deadline = Date.now() + 120_000;
  while (!written().endsWith("\n")) {
    if (Date.now() > deadline) throw new Error("the memory probe did not answer (was it preloaded?)");
    await sleep(100);
  }
  const reading = JSON.parse(written().trim()) as ProbeReading & { gc: boolean };
  rmSync(path, { force: true });
  if (!reading.gc) throw new Error("the memory probe could not collect garbage (--expose-gc missing)");
  return reading;
}

function sumOf(metrics: Map<string, number>, prefix: string): number {
  let total = 0;
  for (const [k, v] of metrics) if (k === prefix || k.startsWith(`${prefix}{`)) total += v;
  return total;
}

interface Reading {
  readonly status: Record<string, number>;
  readonly rssAfterGcMB: number;
  readonly probe: ProbeReading;
  readonly metrics: Map<string, number>;
  readonly natsRssMB: number;
}

async function read(orchestrator: ServedOrchestrator, natsPid: number | undefined): Promise<Reading> {
  const pid = orchestrator.process.child.pid!;
  const status = procStatus(pid);
  const metrics = await orchestrator.metrics();
  const p = await probe(pid);
  return { status, rssAfterGcMB: procStatus(pid).VmRSS ?? NaN, probe: p, metrics, natsRssMB: rssMB(natsPid) };
}

/**
 * Every node reports on its intervals, spread evenly: node i's heartbeat is due at
 * (i / N + k) × heartbeatMs. Publishes go round-robin over the connections; requests are bounded
 * in flight (a tick's share waits for the next tick rather than pile up).
 */
class AgentLoad {
  private timer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  private sent = { heartbeat: 0, resources: 0, info: 0 };
  private inFlight = 0;
  readonly counts = { heartbeats: 0, requests: 0, accepted: 0, refused: 0, failed: 0, deferredTicks: 0 };
  private readonly sequences: Uint32Array;
  private next = 0;

  constructor(
    private readonly connections: readonly NatsConnection[],
    private readonly ids: readonly string[],
    private readonly intervals: { readonly heartbeatMs: number; readonly resourceMs: number; readonly infoMs: number },
  ) {
    this.sequences = new Uint32Array(ids.length);
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private nc(): NatsConnection {
    this.next = (this.next + 1) % this.connections.length;
    return this.connections[this.next]!;
  }

  private due(intervalMs: number, sent: number): number {
    if (intervalMs <= 0 || this.ids.length === 0) return 0;
    return Math.floor(((performance.now() - this.started) / intervalMs) * this.ids.length) - sent;
  }

  private tick(): void {
    const n = this.ids.length;
    for (let k = this.due(this.intervals.heartbeatMs, this.sent.heartbeat); k > 0; k--) {
      const i = this.sent.heartbeat++ % n;
      const id = this.ids[i]!;
      this.nc().publish(computeSubject(id, "heartbeat"), encode({ NodeID: id, Sequence: ++this.sequences[i]! }));
      this.counts.heartbeats++;
    }
    // What the window allows now, resources first; the rest stays due for the next ticks.
    const room = Math.max(0, MAX_IN_FLIGHT - this.inFlight);
    const resources = Math.min(room, this.due(this.intervals.resourceMs, this.sent.resources));
    const info = Math.min(room - Math.max(0, resources), this.due(this.intervals.infoMs, this.sent.info));
    if (
      this.due(this.intervals.resourceMs, this.sent.resources) + this.due(this.intervals.infoMs, this.sent.info) >
      room
    )
      this.counts.deferredTicks++;
    for (let k = resources; k > 0; k--) {
      const i = this.sent.resources++ % n;
      const id = this.ids[i]!;
      this.request(computeSubject(id, "resources"), {
        MessageID: randomUUID(),
        NodeID: id,
        Resources: resourceReport(virtualNodeInfo(id, i)),
      });
    }
    for (let k = info; k > 0; k--) {
      const i = this.sent.info++ % n;
      const id = this.ids[i]!;
      this.request(computeSubject(id, "info"), { MessageID: randomUUID(), Info: virtualNodeInfo(id, i) });
    }
  }

  private request(subject: string, body: Record<string, unknown>): void {
    this.inFlight++;
    this.counts.requests++;
    this.nc()
      .request(subject, encode(body), { timeout: 60_000 })
      .then(
        (reply) => {
          if (decode(ProtocolResponse, reply.data).Accepted) this.counts.accepted++;
          else this.counts.refused++;
        },
        () => this.counts.failed++,
      )
      .finally(() => this.inFlight--);
  }
}

/**
 * Sets the publisher's and the workflow's checkpoints at the store's head: they published and reacted to the seeded
 * events long ago.
 */
function checkpointsAtHead(dataDir: string): number {
  const db = new Database(join(dataDir, "shoal.db"));
  try {
    const head = (db.prepare("SELECT MAX(position) AS head FROM events").get() as { head: number }).head;
    const save = db.prepare(
      "INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position",
    );
    for (const name of ["nats-event-publisher", `workflow-${forgetDeletedNodes.name}`]) save.run(name, head);
    return head;
  } finally {
    db.close();
  }
}

const fmt = (x: number, digits = 0) =>
  x.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(options: BenchOptions): Promise<BenchResult> {
  const key = (k: string) => `orchestrator-memory.${k}`;
  const nodes = setting(options, key("nodes"), options.quick ? 2_000 : 100_000);
  const heartbeatMs = setting(options, key("heartbeatMs"), 5_000);
  const resourceMs = setting(options, key("resourceMs"), 30_000);
  const infoMs = setting(options, key("infoMs"), 60_000);
  const steadySeconds = setting(options, key("steadySeconds"), options.quick ? 15 : 240);
  const baselineSeconds = setting(options, key("baselineSeconds"), options.quick ? 5 : 30);
  const connectionCount = setting(options, key("connections"), 4);
  const disconnectMs = setting(options, key("disconnectTimeoutMs"), 30_000);
  const takeSnapshot = setting(options, key("snapshot"), options.quick ? 0 : 1) === 1;
  const keepSnapshot = setting(options, key("keepSnapshot"), 0) === 1;
  const { log } = options;
  const ids = Array.from({ length: nodes }, (_, i) => `mem-node-${String(i).padStart(6, "0")}`);
  const loadStart = loadavg()[0]!;

  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const snapshotDir = mkdtempSync(join(tmpdir(), "shoal-bench-heap-"));
  cleanups.push(() => (keepSnapshot ? undefined : rmSync(snapshotDir, { recursive: true, force: true })));
  try {
    const server = await startBenchNats(cleanups);
    const settings = {
      "Orchestrator.NATS.URL": server.url,
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      "Orchestrator.NodeManager.DisconnectTimeout": `${disconnectMs}ms`,
    };
    const nodeArgs = [
      "--expose-gc",
      "--import",
      PROBE,
      "--heapsnapshot-signal=SIGUSR2",
      `--diagnostic-dir=${snapshotDir}`,
    ];

    log("  baseline: shoal serve with no nodes");
    const empty = await serveOrchestrator(settings, { nodeArgs });
    let baseline: Reading;
    try {
      await sleep(baselineSeconds * 1000);
      baseline = await read(empty, server.pid);
    } finally {
      await empty.stop();
    }
    log(
      `    RSS ${fmt(baseline.status.VmRSS ?? NaN)} MB, heap used after GC ${fmt(baseline.probe.after.heapUsed / MB, 1)} MB, nats-server ${fmt(baseline.natsRssMB)} MB`,
    );
    log(`    V8 spaces (MB committed/used): ${spacesLine(baseline.probe)}`);

    let seedSeconds = 0;
    let head = 0;
    const loaded = await serveOrchestrator(settings, {
      nodeArgs,
      readyTimeoutMs: 600_000,
      prepare: async (dataDir) => {
        const t0 = performance.now();
        const events = await seedNodes(
          dataDir,
          ids.map((nodeId, index) => ({ nodeId, index, publicKey: wellFormedUserKey() })),
          false,
        );
        head = checkpointsAtHead(dataDir);
        seedSeconds = (performance.now() - t0) / 1000;
        log(
          `  seeded ${fmt(nodes)} APPROVED nodes with keys (${fmt(events)} events, head ${fmt(head)}) in ${seedSeconds.toFixed(1)} s`,
        );
      },
    });
    cleanups.push(() => loaded.stop());
    const pid = loaded.process.child.pid!;
    log(`  shoal serve is up with ${fmt(nodes)} nodes: RSS ${fmt(rssMB(pid))} MB; agents' reports start`);

    const connections: NatsConnection[] = [];
    for (let i = 0; i < connectionCount; i++)
      connections.push(await connect({ servers: server.url, name: `bench-agents-${i}` }));
    cleanups.push(() => Promise.all(connections.map((nc) => nc.close())));
    let heartbeatRefusals = 0;
    connections[0]!.subscribe("shoal.work.*.heartbeat-refused", { callback: () => void heartbeatRefusals++ });
    const load = new AgentLoad(connections, ids, { heartbeatMs, resourceMs, infoMs });
    load.start();
    cleanups.push(() => load.stop());

    const before = await loaded.metrics();
    const cpuBefore = processCpuMs(pid);
    const samples: { t: number; rss: number; resident: number }[] = [];
    const t0 = performance.now();
    let residentMax = 0;
    while (performance.now() - t0 < steadySeconds * 1000) {
      await sleep(SAMPLE_MS);
      const m = await loaded.metrics();
      const resident = sumOf(m, "shoal_actors_resident");
      residentMax = Math.max(residentMax, resident);
      const rss = rssMB(pid);
      samples.push({ t: (performance.now() - t0) / 1000, rss, resident });
      if (samples.length % 6 === 0) {
        log(
          `    ${samples.at(-1)!.t.toFixed(0)} s: RSS ${fmt(rss)} MB, heap used ${fmt(sumOf(m, "nodejs_heap_size_used_bytes") / MB)} MB, actors resident ${fmt(resident)}, ` +
            `heartbeats ${fmt(load.counts.heartbeats)}, requests ${fmt(load.counts.requests)} (${fmt(load.counts.failed)} failed), lag max ${fmt(sumOf(m, "shoal_event_loop_lag_max_seconds") * 1000)} ms`,
        );
      }
    }
    const cpuMs = processCpuMs(pid) - cpuBefore;
    const steady = await read(loaded, server.pid);
    load.stop();
    log(`  V8 spaces before the full GC (MB committed/used): ${spacesLine(steady.probe)}`);
    const after = steady.metrics;
    const heartbeatsIngested =
      sumOf(after, "shoal_heartbeats_received_total") - sumOf(before, "shoal_heartbeats_received_total");
    const eventsWritten = sumOf(after, "shoal_events_appended_total") - sumOf(before, "shoal_events_appended_total");
    const healthy = sumOf(after, 'shoal_nodes{health="HEALTHY",membership="APPROVED"}');
    const rssSeries = samples.map((s) => s.rss);
    const secondHalf = rssSeries.slice(Math.floor(rssSeries.length / 2));

    let heapOwners: Record<string, string> = {};
    let snapshotMB = 0;
    if (takeSnapshot) {
      log("  heap snapshot of the loaded orchestrator");
      const had = new Set(readdirSync(snapshotDir));
      process.kill(pid, "SIGUSR2");
      let file: string | undefined;
      let lastSize = -1;
      const deadline = Date.now() + 600_000;
      for (;;) {
        if (Date.now() > deadline) throw new Error("no heap snapshot written in 10 minutes");
        await sleep(1_000);
        file ??= readdirSync(snapshotDir).find((f) => f.endsWith(".heapsnapshot") && !had.has(f));
        if (file === undefined) continue;
        const size = statSync(join(snapshotDir, file)).size;
        // Written synchronously by the orchestrator's thread: complete once it answers again and the size holds.
        if (
          size === lastSize &&
          size > 0 &&
          (await loaded.metrics().then(
            () => true,
            () => false,
          ))
        )
          break;
        lastSize = size;
      }
      snapshotMB = lastSize / MB;
      await loaded.stop();
      log(`    ${fmt(snapshotMB)} MB written; attributing its bytes to owners`);
      const graph = readHeapSnapshot(join(snapshotDir, file));
      const breakdown = attribute(graph, ORCHESTRATOR_HEAP_OWNERS);
      const line = (name: string, bytes: number, strings: number, objects: number) =>
        `${fmt(bytes / MB, 1)} MB (${fmt(bytes / Math.max(1, nodes))} B/node; strings ${fmt(strings / MB, 1)} MB; ${fmt(objects)} objects)`;
      heapOwners = Object.fromEntries([
        [
          "heap snapshot total",
          `${fmt(breakdown.totalBytes / MB, 1)} MB (${fmt(breakdown.totalBytes / Math.max(1, nodes))} B/node; ${fmt(graph.nodeCount)} objects)`,
        ],
        ...breakdown.owners.map((o) => [
          `owner: ${o.name}`,
          `${line(o.name, o.bytes, o.stringBytes, o.objects)}${o.kinds.length === 0 ? "" : `; largest: ${o.kinds.map((k) => `${k.kind} ${fmt(k.bytes / Math.max(1, nodes))} B/node (${fmt(k.objects)})`).join(", ")}`}`,
        ]),
        ...breakdown.rest.slice(0, 12).map((o) => [`rest: ${o.name}`, line(o.name, o.bytes, o.stringBytes, o.objects)]),
      ]);
      for (const [k, v] of Object.entries(heapOwners)) log(`    ${k.padEnd(64)} ${v}`);
      if (keepSnapshot) log(`    kept: ${join(snapshotDir, file)}`);
    }

    const rss = steady.status.VmRSS ?? NaN;
    const baseRss = baseline.status.VmRSS ?? NaN;
    const perNode = (mb: number, baseMb: number) => ((mb - baseMb) * MB) / 1024 / Math.max(1, nodes);
    const heapUsed = steady.probe.after.heapUsed / MB;
    const baseHeapUsed = baseline.probe.after.heapUsed / MB;
    const figures: BenchFigure[] = [
      {
        name: `orchestrator RSS, ${fmt(nodes)} registered heartbeating nodes`,
        value: rss,
        unit: "MB",
        baseline: { name: "the same orchestrator with no nodes", value: baseRss },
        target: { on: "value", max: 400 },
        note: `the target is for the orchestrator and its nats-server together: this is the orchestrator alone; steady-state samples ${fmt(Math.min(...secondHalf))}–${fmt(Math.max(...secondHalf))} MB over the second half; VmHWM ${fmt(steady.status.VmHWM ?? NaN)} MB; after a full GC ${fmt(steady.rssAfterGcMB)} MB`,
      },
      {
        name: "orchestrator RSS per node over the no-node baseline",
        value: perNode(rss, baseRss),
        unit: "KB",
        note: `${fmt(rss - baseRss)} MB ÷ ${fmt(nodes)}; RssAnon ${fmt(steady.status.RssAnon ?? NaN)} MB (baseline ${fmt(baseline.status.RssAnon ?? NaN)})`,
      },
      {
        name: "V8 heap used after a full GC",
        value: heapUsed,
        unit: "MB",
        baseline: { name: "no nodes", value: baseHeapUsed },
        note: `${fmt(perNode(heapUsed, baseHeapUsed), 2)} KB per node; before the GC ${fmt(steady.probe.before.heapUsed / MB)} MB (no nodes ${fmt(baseline.probe.before.heapUsed / MB)}); heap total ${fmt(steady.probe.after.heapTotal / MB)} MB`,
      },
      {
        name: "external memory (of it arrayBuffers)",
        value: steady.probe.after.external / MB,
        unit: "MB",
        baseline: { name: "no nodes", value: baseline.probe.after.external / MB },
        note: `arrayBuffers ${fmt(steady.probe.after.arrayBuffers / MB, 1)} MB (no nodes ${fmt(baseline.probe.after.arrayBuffers / MB, 1)}); /metrics nodejs_external_memory_bytes ${fmt(sumOf(after, "nodejs_external_memory_bytes") / MB, 1)} MB`,
      },
      {
        name: "orchestrator CPU per 1,000 messages in the steady state",
        value: cpuMs / ((load.counts.heartbeats + load.counts.requests) / 1000),
        unit: "ms",
        note: `${fmt(cpuMs / 1000, 1)} CPU-s (its threads, the GC's included) over ${steadySeconds} s for ${fmt(load.counts.heartbeats)} heartbeats and ${fmt(load.counts.requests)} requests: what the memory settings cost, less load-dependent than the lag`,
      },
      {
        name: "nats-server RSS (external, open; the bench's few connections)",
        value: steady.natsRssMB,
        unit: "MB",
        note: "not the per-node-connection figure: see Fleet, memory per node",
      },
      {
        name: "node actors resident (end; max over the run)",
        value: sumOf(after, "shoal_actors_resident"),
        unit: "actors",
        note: `max ${fmt(residentMax)} (sampled every ${SAMPLE_MS / 1000} s)`,
      },
      {
        name: "heartbeats ingested during the steady state",
        value: heartbeatsIngested / steadySeconds,
        unit: "/s",
        note: `${fmt(heartbeatsIngested)} of ${fmt(load.counts.heartbeats)} published; ${fmt(healthy)} of ${fmt(nodes)} nodes HEALTHY at the end (the orchestrator's own node included); ${fmt(eventsWritten)} events written during the steady state; requests ${fmt(load.counts.requests)} (${fmt(load.counts.accepted)} accepted, ${fmt(load.counts.refused)} refused, ${fmt(load.counts.failed)} failed, ${fmt(load.counts.deferredTicks)} ticks deferred); ${fmt(heartbeatRefusals)} heartbeat refusals`,
      },
    ];
    return {
      figures,
      parameters: {
        nodes,
        heartbeatMs,
        resourceMs,
        infoMs,
        steadySeconds,
        baselineSeconds,
        connections: connectionCount,
        disconnectTimeoutMs: disconnectMs,
        seedSeconds: Math.round(seedSeconds),
        seededHead: head,
        loadAverageStart: Number(loadStart.toFixed(1)),
        loadAverageEnd: Number(loadavg()[0]!.toFixed(1)),
        rssSamplesMB: rssSeries.join(" "),
        residentSamples: samples.map((s) => s.resident).join(" "),
        snapshotMB: Math.round(snapshotMB),
        nodeFlags: shoalLaunch().nodeFlags.join(" "),
        v8SpacesMB: spacesLine(steady.probe),
        v8SpacesNoNodesMB: spacesLine(baseline.probe),
        ...heapOwners,
      },
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

await runStandalone(import.meta.url, run, [
  "orchestrator-memory.nodes",
  "orchestrator-memory.steadySeconds",
  "orchestrator-memory.snapshot",
]);
