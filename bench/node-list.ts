/**
 * `GET /api/v1/orchestrator/nodes?limit=100` over a fleet of 100,000 nodes, 50 keep-alive
 * connections, several query shapes, against `GET /api/v1/agent/alive` in the same run.
 *
 * The API runs in a child process (the load generator would otherwise share its event loop):
 * the real Fastify app (buildApi) with the real NodeViews fold and NodeIndex, and a NodeManager
 * over an empty SQLite store. The views are seeded directly, not through the store (100,000
 * fsynced registrations would take a minute): each node's events are handed to
 * NodeViews.handle as the projection would, so the fold and the index do the same work they do
 * in `shoal serve`. The NodeManager then adopts those views' states, as at a start, so it
 * tracks every compute node's liveness: every healthy node heartbeats every 5 s and one report
 * in ten carries resources (through NodeManager.heartbeat/updateResources, the capacity index
 * fed by its hook), so bodies carry live LastHeartbeat and capacity fields.
 *
 * Besides requests/s and latency, each shape's server CPU per request is read from /proc (the
 * API process's utime + stime): on a shared machine that, and its ratio to /alive's, says more
 * than the rates. The API process also reports what the kept NodeState JSON of every node costs
 * in heap (rendered once each, after a full GC, against the heap before).
 *
 * Run: npx tsx bench/node-list.ts [nodes] [seconds per shape]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import type { NodeStateJson as NodeStateJsonType } from "../src/api/nodes/node-state-json.ts";
import { setting, type BenchOptions } from "./bench-result.ts";

const isMain = process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== "--serve";
// Standalone: positional arguments. Under bench/run.ts: --set node-list.nodes=… / node-list.seconds=….
const DEFAULT_NODES = Number((isMain ? process.argv[2] : undefined) ?? process.env.SHOAL_BENCH_NODES ?? 100_000);
const DEFAULT_SECONDS = Number((isMain ? process.argv[3] : undefined) ?? process.env.SHOAL_BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;

interface ShapeResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  maxMs: number;
}

/** Holds the cache being measured: a local never read again is no root for the GC. */
const measuring: { cache?: NodeStateJsonType } = {};

/** The API with a seeded fleet, in this process; prints its port, then serves until killed. */
async function serve(nodes: number): Promise<void> {
  const { buildApi } = await import("../src/api/api-server.ts");
  const { updateNodeCommand } = await import("../src/api/nodes/update-node-command.ts");
  const { NodeManager } = await import("../src/actors/node-manager.ts");
  const { HealthThresholds } = await import("../src/actors/health-thresholds.ts");
  const { systemClock } = await import("../src/actors/clock.ts");
  const { SqliteEventStore } = await import("../src/events/sqlite/sqlite-event-store.ts");
  const { NodeViews } = await import("../src/projections/node-views.ts");
  const { NodeIndex } = await import("../src/projections/node-index/node-index.ts");
  const { NodeHistory } = await import("../src/projections/node-history.ts");
  const { ClusterAsOf } = await import("../src/projections/as-of/cluster-as-of.ts");
  const { ProcessorHost } = await import("../src/projections/processor-host.ts");
  const { NodeStateJson } = await import("../src/api/nodes/node-state-json.ts");
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-list-"));
  const store = new SqliteEventStore(join(dir, "shoal.db"));
  const logger = pino({ level: "silent" });
  const index = new NodeIndex();
  const manager = new NodeManager({
    store,
    clock: systemClock,
    logger,
    manualApproval: true,
    thresholds: new HealthThresholds({ disconnectMs: 3_600_000, unknownMs: 7_200_000 }),
    onResources: (id, r) => index.setCapacity(id, r?.AvailableCapacity),
  });
  const views = new NodeViews((id, _before, after) => index.update(id, after));
  let position = 0;
  const time = new Date().toISOString();
  const feed = (nodeId: string, revision: number, type: string, data: unknown) =>
    views.handle({
      id: `${nodeId}-${revision}`,
      type,
      stream: `node-${nodeId}`,
      revision,
      position: ++position,
      time,
      data,
      metadata: { schemaVersion: 1 },
    });
  // Deterministic spread: 60 % approved, 5 % unhealthy, zones a-d, gpu on 20 %, `spot` on all but 0.1 %.
  const started = performance.now();
  for (let i = 0; i < nodes; i++) {
    const nodeId = `node-${String(i).padStart(6, "0")}`;
    const labels: Record<string, string> = { zone: "abcd"[i % 4] as string, rack: `r${i % 50}` };
    if (i % 5 === 0) labels.gpu = "true";
    if (i % 1000 !== 7) labels.spot = "true";
    const info = {
      NodeID: nodeId,
      NodeType: "Compute",
      Hostname: `${nodeId}.bench`,
      Labels: labels,
      ComputeNodeInfo: {
        ExecutionEngines: ["docker"],
        Publishers: ["local"],
        StorageSources: ["urlDownload"],
        MaxCapacity: { CPU: 8, Memory: 16e9, Disk: 100e9, GPU: 1 },
        MaxJobRequirements: {},
      },
      BacalhauVersion: { GitVersion: "v1.6.0", GOOS: "linux", GOARCH: "amd64" },
    };
    feed(nodeId, 0, "NodeRegistered", {
      NodeID: nodeId,
      NodeType: "Compute",
      Info: info,
      Membership: "PENDING",
      Lifecycle: 1,
    });
    let revision = 1;
    if (i % 5 < 3) feed(nodeId, revision++, "NodeApproved", { NodeID: nodeId, Previous: "PENDING" });
    if (i % 20 === 3)
      feed(nodeId, revision++, "NodeBecameUnhealthy", {
        NodeID: nodeId,
        LastHeartbeat: time,
        DisconnectTimeoutMs: 30_000,
      });
  }
  // The manager learns every node as from a snapshot (the store holds none of these events).
  manager.adoptRecovered(views.recovered());
  const ids = views
    .all()
    .filter((v) => v.health === "HEALTHY")
    .map((v) => v.nodeId);
  let beatRound = 0;
  const report = (i: number) => ({
    AvailableCapacity: {
      CPU: (i * 7 + beatRound) % 9,
      Memory: ((i * 13 + beatRound) % 17) * 1e9,
      Disk: ((i * 31) % 101) * 1e9,
      GPU: i % 5 === 0 ? 1 : 0,
    },
    QueueUsedCapacity: { CPU: beatRound % 3 },
    RunningExecutions: (i + beatRound) % 4,
    EnqueuedExecutions: 0,
  });
  for (let i = 0; i < ids.length; i++) {
    void manager.heartbeat(ids[i] as string);
    manager.updateResources(ids[i] as string, report(i));
  }
  const seededMs = performance.now() - started;
  const heapMb = () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    return process.memoryUsage().heapUsed / 1e6;
  };
  // What the route's cache costs once every node has been listed: the same class, filled.
  const heapBefore = heapMb();
  const filled = new NodeStateJson();
  measuring.cache = filled;
  for (const view of views.all()) filled.render(view, manager.live(view.nodeId));
  const heapWith = heapMb();
  delete measuring.cache;
  const heapAfter = heapMb();
  // Every healthy node heartbeats every 5 s, in slices every 100 ms; one report in ten carries resources.
  const SLICES = 50;
  let slice = 0;
  const beats = setInterval(() => {
    for (let i = slice; i < ids.length; i += SLICES) {
      void manager.heartbeat(ids[i] as string);
      if ((i + beatRound) % 10 === 0) manager.updateResources(ids[i] as string, report(i));
    }
    slice = (slice + 1) % SLICES;
    if (slice === 0) beatRound++;
  }, 5000 / SLICES);
  const processors = new ProcessorHost({ store, logger });
  const api = buildApi({
    logger,
    self: {
      NodeID: "bench-orchestrator",
      NodeType: "Requester",
      Hostname: "bench",
      Labels: {},
      BacalhauVersion: { GitVersion: "bench", GOOS: "linux", GOARCH: "amd64" },
    },
    manager,
    views,
    index,
    // The views are seeded above; the store is empty, so this processor only keeps the API's read-your-writes honest.
    projection: processors.add({ name: "node-views", handle: (batch) => batch.forEach(views.handleEnvelope) }),
    history: new NodeHistory(store),
    asOf: new ClusterAsOf({ store, clock: systemClock, logger }),
    updateNode: updateNodeCommand(manager).run,
    auth: { users: [], anonymousAccess: "read" },
  });
  await processors.start();
  await api.listen({ host: "127.0.0.1", port: 0 });
  const address = api.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(
    `${JSON.stringify({
      port,
      seededMs: Math.round(seededMs),
      nodes: index.size,
      rssMb: Math.round(process.memoryUsage().rss / 1e6),
      heapMb: Math.round(heapBefore),
      jsonCacheMb: Math.round(heapWith - heapBefore),
      jsonCacheReleasedMb: Math.round(heapWith - heapAfter),
    })}\n`,
  );
  const stop = () => {
    clearInterval(beats);
    manager.stop();
    void api.close().then(() => {
      void store.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  };
  process.on("SIGTERM", stop);
}

/** The body is read to its end but kept only when asked for: the load generator must cost little beside the API. */
function get(agent: Agent, port: number, path: string, keepBody = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => keepBody && chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: keepBody ? Buffer.concat(chunks).toString("utf8") : "" }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** 50 connections, each sending its next request as soon as the last one is answered. */
async function load(port: number, path: string, seconds: number): Promise<ShapeResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await get(agent, port, path);
          if (res.status !== 200) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    maxMs: latencies[latencies.length - 1] ?? 0,
  };
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** A process's CPU time so far in ms (utime + stime from /proc; undefined off Linux). */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // Fields 14 and 15 of stat, counted after the command name: utime and stime, in clock ticks (100/s).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

export async function run(options?: BenchOptions): Promise<Record<string, number | string>> {
  const nodes = options ? setting(options, "node-list.nodes", options.quick ? 10_000 : DEFAULT_NODES) : DEFAULT_NODES;
  const seconds = options
    ? setting(options, "node-list.seconds", options.quick ? 2 : DEFAULT_SECONDS)
    : DEFAULT_SECONDS;
  const child = spawn(
    process.execPath,
    ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), "--serve", String(nodes)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const ready = await new Promise<{
    port: number;
    seededMs: number;
    nodes: number;
    rssMb: number;
    heapMb: number;
    jsonCacheMb: number;
    jsonCacheReleasedMb: number;
  }>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(JSON.parse(line));
    });
    child.on("exit", (code) => reject(new Error(`the API process exited (${code}) before it was ready`)));
  });
  try {
    const agent = new Agent({ keepAlive: true });
    // A next_token from deep in the fleet: pages from the middle cost what the first page does.
    const deep = JSON.parse(
      (await get(agent, ready.port, "/api/v1/orchestrator/nodes?limit=5000&order_by=available_memory", true)).body,
    ) as { NextToken: string };
    agent.destroy();
    const shapes: [string, string][] = [
      ["alive", "/api/v1/agent/alive"],
      ["list", "/api/v1/orchestrator/nodes?limit=100"],
      ["list_cpu_reverse", "/api/v1/orchestrator/nodes?limit=100&order_by=available_cpu&reverse=true"],
      [
        "list_memory_next_token",
        `/api/v1/orchestrator/nodes?limit=100&order_by=available_memory&next_token=${deep.NextToken}`,
      ],
      ["list_disconnected", "/api/v1/orchestrator/nodes?limit=100&filter-status=DISCONNECTED&order_by=status"],
      [
        "list_pending_zone",
        "/api/v1/orchestrator/nodes?limit=100&filter-approval=PENDING&labels=zone%3Da&order_by=approval",
      ],
      [
        "list_gpu_not_rack",
        "/api/v1/orchestrator/nodes?limit=100&labels=gpu%3Dtrue,rack!%3Dr0&order_by=available_disk",
      ],
      ["list_label_matches_nothing", "/api/v1/orchestrator/nodes?limit=100&labels=zone%3Dnowhere"],
      // Only a negative term, matched by 0.1 % of the nodes: answered from the complement of spot's posting
      // (label-index.ts).
      ["list_negative_only_rare", "/api/v1/orchestrator/nodes?limit=100&labels=!spot"],
      // A positive term 2 % of the nodes match, in a capacity order: ranked from its posting, not walked past 98 %
      // non-matches.
      ["list_rare_positive", "/api/v1/orchestrator/nodes?limit=100&labels=rack%3Dr7&order_by=available_memory"],
    ];
    const out: Record<string, number | string> = {
      nodes: ready.nodes,
      connections: CONNECTIONS,
      seconds_per_shape: seconds,
      seed_ms: ready.seededMs,
      api_rss_mb: ready.rssMb,
      api_heap_mb: ready.heapMb,
      json_cache_heap_mb: ready.jsonCacheMb,
      json_cache_released_mb: ready.jsonCacheReleasedMb,
    };
    let aliveRps = 0;
    let aliveCpuUs = 0;
    // Warm-up: the seeding's garbage collected and the routes' code optimised before anything is timed.
    await load(ready.port, "/api/v1/orchestrator/nodes?limit=100", Math.min(3, seconds));
    for (const [name, path] of shapes) {
      const cpu0 = cpuMs(child.pid);
      const r = await load(ready.port, path, seconds);
      const cpu1 = cpuMs(child.pid);
      const cpuUs = cpu0 === undefined || cpu1 === undefined ? Number.NaN : ((cpu1 - cpu0) * 1000) / r.requests;
      if (name === "alive") {
        aliveRps = r.rps;
        aliveCpuUs = cpuUs;
      }
      out[`${name}_rps`] = round(r.rps, 0);
      out[`${name}_p50_ms`] = round(r.p50, 2);
      out[`${name}_p99_ms`] = round(r.p99, 2);
      out[`${name}_errors`] = r.errors;
      out[`${name}_cpu_us`] = round(cpuUs, 0);
      if (name !== "alive") {
        out[`${name}_vs_alive`] = round(r.rps / aliveRps, 2);
        // What the rates' ratio would be if both were bound by the API process's CPU alone.
        out[`${name}_cpu_vs_alive`] = round(aliveCpuUs / cpuUs, 2);
      }
    }
    // `!spot` paged to its end: every node matching it, and what it took (one page since round 7; 63 budget-cut pages
    // before).
    const agent2 = new Agent({ keepAlive: true });
    let token = "";
    let pages = 0;
    let found = 0;
    let slowest = 0;
    do {
      const t0 = performance.now();
      const page = JSON.parse(
        (
          await get(
            agent2,
            ready.port,
            `/api/v1/orchestrator/nodes?limit=100&labels=!spot${token ? `&next_token=${token}` : ""}`,
            true,
          )
        ).body,
      ) as { Nodes: unknown[]; NextToken: string };
      slowest = Math.max(slowest, performance.now() - t0);
      found += page.Nodes.length;
      token = page.NextToken;
      pages++;
    } while (token);
    agent2.destroy();
    out.negative_only_walk_pages = pages;
    out.negative_only_walk_nodes = found;
    out.negative_only_walk_slowest_ms = round(slowest, 2);
    return out;
  } finally {
    child.kill("SIGTERM");
  }
}

if (process.argv[2] === "--serve") {
  await serve(Number(process.argv[3]));
} else if (isMain) {
  const result = await run();
  const names = [
    ...new Set(
      Object.keys(result)
        .filter((k) => k.endsWith("_rps"))
        .map((k) => k.slice(0, -4)),
    ),
  ];
  console.log(
    `node list: ${result.nodes} nodes, ${CONNECTIONS} connections, ${result.seconds_per_shape} s per shape (seeded in ${result.seed_ms} ms, API RSS ${result.api_rss_mb} MB, heap ${result.api_heap_mb} MB; every node's kept JSON +${result.json_cache_heap_mb} MB)`,
  );
  console.log(
    `${"shape".padEnd(28)} ${"req/s".padStart(8)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"× alive".padStart(8)} ${"CPU µs".padStart(8)} ${"CPU × alive".padStart(11)} errors`,
  );
  for (const n of names) {
    console.log(
      `${n.padEnd(28)} ${String(result[`${n}_rps`]).padStart(8)} ${String(result[`${n}_p50_ms`]).padStart(8)} ${String(result[`${n}_p99_ms`]).padStart(8)} ${String(result[`${n}_vs_alive`] ?? "").padStart(8)} ${String(result[`${n}_cpu_us`]).padStart(8)} ${String(result[`${n}_cpu_vs_alive`] ?? "").padStart(11)} ${result[`${n}_errors`]}`,
    );
  }
  console.log(
    `labels=!spot&limit=100 paged to its end: ${result.negative_only_walk_nodes} nodes in ${result.negative_only_walk_pages} pages, slowest page ${result.negative_only_walk_slowest_ms} ms`,
  );
}
