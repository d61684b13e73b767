/**
 * Memory with the nodes' connections held on leaf servers (docs/operations.md, Leaf servers):
 * a real `shoal serve` (its embedded nats-server, the hub, accepting leaf servers on
 * Orchestrator.NATS.LeafNodes.Port), `leaves` leaf nats-servers each started from a configuration
 * `shoal leaf config` wrote, and N nodes spread over them, joined over the real protocol and held
 * as agents hold them (bench/support/storm-joiner.ts with STORM_AS_AGENT=1: the heartbeat-refusal
 * subscription, a request's reply inbox, a heartbeat every 5 s), one client process per leaf.
 *
 * Figures: the hub nats-server's and the orchestrator's RSS before and with N nodes, per node, and
 * projected to 100,000 nodes (RSS before + per node × 100,000) against the target (≤ 400 MB for
 * both); the leaves' RSS per connection (they run near the nodes, not on the orchestrator's
 * machine); the hub's CPU per join (logins are taken at the leaves).
 *
 * Each process may hold 20,000 open files here: a leaf (and its client process) holds at most
 * ≈ 19,000 nodes, so N ≤ 19,000 × leaves.
 *
 * The hub's Go runtime: `gogc` and `gomemlimitMB` set Orchestrator.NATS.GOGC and
 * Orchestrator.NATS.GOMEMLIMIT (0: the key's default). The orchestrator's V8 heap (used, total) and
 * resident actors are read from /metrics beside its RSS, to tell heap from what V8 has not given back.
 *
 * Run: npx tsx bench/fleet-leaves.ts [nodes=20000] [leaves=2] [concurrency=32] [settleSeconds=20] [gogc=0]
 * [gomemlimitMB=0]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { EmbeddedNatsServer } from "../src/transport/embedded-nats-server.ts";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { startJoiner, type Joiner } from "./fleet-storm.ts";
import { PROBE, probe } from "./orchestrator-memory.ts";
import { freePort } from "./support/free-port.ts";
import { processCpuMs } from "./support/process-cpu.ts";
import { rssMB } from "./support/process-rss.ts";
import { serveOrchestrator } from "./support/shoal-serve.ts";

const SHOAL = join(import.meta.dirname, "../bin/shoal");
const TARGET_NODES = 100_000;
const TARGET_MB = 400;
const PER_LEAF_MAX = 19_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "fleet-leaves.nodes", options.quick ? 400 : 20_000);
  const leafCount = setting(
    options,
    "fleet-leaves.leaves",
    options.quick ? 2 : Math.max(2, Math.ceil(nodes / PER_LEAF_MAX)),
  );
  const concurrency = setting(options, "fleet-leaves.concurrency", 32);
  const settleSeconds = setting(options, "fleet-leaves.settleSeconds", options.quick ? 5 : 20);
  const gogc = setting(options, "fleet-leaves.gogc", 0);
  const gomemlimitMB = setting(options, "fleet-leaves.gomemlimitMB", 0);
  if (Math.ceil(nodes / leafCount) > PER_LEAF_MAX)
    throw new Error(`${nodes} nodes on ${leafCount} leaves is more than ${PER_LEAF_MAX} a leaf (the open-file limit)`);
  const log = options.log;
  const leafPort = await freePort();
  const orchestrator = await serveOrchestrator(
    {
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": await freePort(),
      "Orchestrator.NATS.LeafNodes.Port": leafPort,
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      "Orchestrator.NodeManager.DisconnectTimeout": "30s",
      "Orchestrator.NodeManager.UnknownTimeout": "1h",
      ...(gogc > 0 ? { "Orchestrator.NATS.GOGC": gogc } : {}),
      ...(gomemlimitMB > 0 ? { "Orchestrator.NATS.GOMEMLIMIT": `${gomemlimitMB}MiB` } : {}),
    },
    { nodeArgs: ["--expose-gc", "--import", PROBE] },
  );
  const leaves: EmbeddedNatsServer[] = [];
  const joiners: Joiner[] = [];
  const root = mkdtempSync(join(tmpdir(), "shoal-bench-leaves-"));
  try {
    const orchestratorPid = orchestrator.process.child.pid;
    const hubPid = Number(readFileSync(join(orchestrator.dataDir, "nats", "nats-server.pid"), "utf8").trim());
    for (let i = 0; i < leafCount; i++) {
      const dir = join(root, `leaf-${i}`);
      const port = await freePort();
      // As an operator does it: the CLI, beside the orchestrator, with its DataDir.
      execFileSync(
        SHOAL,
        [
          "leaf",
          "config",
          "--out",
          dir,
          "--listen",
          `127.0.0.1:${port}`,
          "--name",
          `leaf-${i}`,
          "-c",
          `DataDir=${orchestrator.dataDir}`,
          "-c",
          `Orchestrator.NATS.LeafNodes.Port=${leafPort}`,
          "-c",
          "Orchestrator.Host=127.0.0.1",
          // As the orchestrator has it (serveOrchestrator): the hub speaks plain NATS to its leaves.
          "-c",
          "Orchestrator.NATS.TLS.Disable=true",
        ],
        { stdio: "ignore" },
      );
      leaves.push(
        await EmbeddedNatsServer.start({
          host: "127.0.0.1",
          port,
          dir,
          logger: pino({ level: "silent" }),
          configFile: join(dir, "leaf.conf"),
        }),
      );
    }
    await sleep(2000); // the leaves' remotes connect and are handed the account JWT
    const baseHeap = (await probe(orchestrator.process.child.pid!)).after.heapUsed / 1024 / 1024;
    const before = {
      orchestratorRss: rssMB(orchestratorPid),
      hubRss: rssMB(hubPid),
      hubCpu: processCpuMs(hubPid),
      orchestratorCpu: processCpuMs(orchestratorPid),
      leafRss: leaves.map((l) => rssMB(l.pid)),
    };
    const loadBefore = load();
    log(
      `  ${nodes} nodes over ${leafCount} leaf servers, ${concurrency} joins in flight per leaf; hub ${before.hubRss} MB, orchestrator ${before.orchestratorRss} MB; load ${loadBefore}`,
    );
    const tokenFile = join(orchestrator.dataDir, "credentials", "join-token");
    const share = Math.ceil(nodes / leafCount);
    leaves.forEach((leaf, i) => {
      const count = Math.min(share, nodes - i * share);
      if (count > 0)
        joiners.push(startJoiner(leaf.url, tokenFile, i * share, count, concurrency, true, { STORM_AS_AGENT: "1" }));
    });
    while (!joiners.every((j) => j.ready)) {
      const broken = joiners.find((j) => j.exited);
      if (broken) throw new Error(`a client did not start: ${broken.stderr.slice(-1500)}`);
      await sleep(50);
    }
    const t0 = performance.now();
    for (const j of joiners) j.child.stdin?.write("go\n");
    let lastLog = 0;
    while (!joiners.every((j) => j.last.done)) {
      const broken = joiners.find((j) => j.exited && !j.last.done);
      if (broken) throw new Error(`a client stopped: ${broken.stderr.slice(-1500)}`);
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        const joined = joiners.reduce((sum, j) => sum + j.last.joined, 0);
        log(
          `  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${joined} joined; hub ${rssMB(hubPid)} MB, orchestrator ${rssMB(orchestratorPid)} MB; load ${load()}`,
        );
      }
      await sleep(200);
    }
    const joinS = (performance.now() - t0) / 1000;
    const cpu = {
      hub: processCpuMs(hubPid) - before.hubCpu,
      orchestrator: processCpuMs(orchestratorPid) - before.orchestratorCpu,
    };
    log(`  all ${nodes} joined and held in ${joinS.toFixed(0)} s; heartbeating for ${settleSeconds} s`);
    const settleStart = { hubCpu: processCpuMs(hubPid), at: performance.now() };
    await sleep(settleSeconds * 1000);
    // Each held node heartbeats every 5 s (storm-joiner): the hub's CPU per 1,000 of them, GC included.
    const heartbeatsSettled = (nodes / 5) * ((performance.now() - settleStart.at) / 1000);
    const hubSteadyCpuMs = processCpuMs(hubPid) - settleStart.hubCpu;
    const metrics = await orchestrator.metrics();
    const healthy = metrics.get('shoal_nodes{health="HEALTHY",membership="APPROVED"}') ?? 0;
    const heapMB = (name: string) => (metrics.get(name) ?? 0) / 1024 / 1024;
    const residentActors = [...metrics]
      .filter(([k]) => k.startsWith("shoal_actors_resident"))
      .reduce((sum, [, v]) => sum + v, 0);
    const after = {
      orchestratorRss: rssMB(orchestratorPid),
      hubRss: rssMB(hubPid),
      leafRss: leaves.map((l) => rssMB(l.pid)),
    };
    const loadAfter = load();
    // Last, as it changes what it reads: a full GC in the orchestrator, then its heap and RSS.
    const gc = await probe(orchestratorPid!);
    const rssAfterGc = rssMB(orchestratorPid);
    const perNode = (mb: number, base: number) => ((mb - base) * 1024) / nodes;
    const hubKB = perNode(after.hubRss, before.hubRss);
    const orchestratorKB = perNode(after.orchestratorRss, before.orchestratorRss);
    const project = (base: number, kb: number) => base + (kb * TARGET_NODES) / 1024;
    const leafKB = leaves.map(
      (_, i) => ((after.leafRss[i]! - before.leafRss[i]!) * 1024) / Math.min(share, nodes - i * share),
    );
    const note = `load average ${loadBefore} before, ${loadAfter} after`;
    const figures: BenchFigure[] = [
      {
        name: "nodes held via leaf servers, listed HEALTHY",
        value: healthy,
        unit: "",
        note: `of ${nodes} (and the orchestrator itself); joined in ${joinS.toFixed(0)} s; ${note}`,
      },
      {
        name: "hub nats-server RSS per node held via leaves",
        value: hubKB,
        unit: "KB",
        note: `${before.hubRss} → ${after.hubRss} MB`,
      },
      {
        name: "orchestrator RSS per node",
        value: orchestratorKB,
        unit: "KB",
        note: `${before.orchestratorRss} → ${after.orchestratorRss} MB`,
      },
      {
        name: "orchestrator V8 heap used at the end",
        value: heapMB("nodejs_heap_size_used_bytes"),
        unit: "MB",
        note: `heap total ${heapMB("nodejs_heap_size_total_bytes").toFixed(0)} MB, external ${heapMB("nodejs_external_memory_bytes").toFixed(0)} MB, ${residentActors} actors resident`,
      },
      {
        name: "orchestrator V8 heap after a full GC, per node",
        value: ((gc.after.heapUsed / 1024 / 1024 - baseHeap) * 1024) / nodes,
        unit: "KB",
        note: `${baseHeap.toFixed(0)} → ${(gc.after.heapUsed / 1024 / 1024).toFixed(0)} MB (${(gc.before.heapUsed / 1024 / 1024).toFixed(0)} MB before that GC); RSS after it ${rssAfterGc} MB`,
      },
      { name: "hub nats-server RSS at 100,000 nodes, projected", value: project(before.hubRss, hubKB), unit: "MB" },
      {
        name: "orchestrator RSS at 100,000 nodes, projected",
        value: project(before.orchestratorRss, orchestratorKB),
        unit: "MB",
      },
      {
        name: "orchestrator + hub nats-server RSS at 100,000 nodes, projected",
        value: project(before.hubRss, hubKB) + project(before.orchestratorRss, orchestratorKB),
        unit: "MB",
        target: { on: "value", max: TARGET_MB },
        note: "RSS before + per node × 100,000, each process",
      },
      {
        name: "leaf nats-server RSS per node connection",
        value: leafKB.reduce((a, b) => a + b, 0) / leafKB.length,
        unit: "KB",
        note: `leaves ${before.leafRss.join(", ")} → ${after.leafRss.join(", ")} MB (near the nodes, not on the orchestrator's machine)`,
      },
      {
        name: "hub nats-server CPU per join",
        value: cpu.hub / nodes,
        unit: "ms",
        note: `${(cpu.hub / 1000).toFixed(1)} CPU-s; the logins are taken at the leaves`,
      },
      {
        name: "hub nats-server CPU per 1,000 heartbeats, held nodes",
        value: (hubSteadyCpuMs * 1000) / heartbeatsSettled,
        unit: "ms",
        note: `${(hubSteadyCpuMs / 1000).toFixed(1)} CPU-s in ${settleSeconds} s of heartbeats (and the leaves' traffic)`,
      },
      {
        name: "orchestrator CPU per join",
        value: cpu.orchestrator / nodes,
        unit: "ms",
        note: `${(cpu.orchestrator / 1000).toFixed(1)} CPU-s`,
      },
    ];
    return { figures, parameters: { nodes, leaves: leafCount, concurrency, settleSeconds, gogc, gomemlimitMB } };
  } finally {
    for (const j of joiners) if (!j.exited) j.child.kill("SIGTERM");
    await Promise.all(joiners.map((j) => (j.exited ? undefined : new Promise((r) => j.child.once("exit", r)))));
    for (const leaf of leaves) await leaf.stop();
    await orchestrator.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await runStandalone(import.meta.url, run, [
  "fleet-leaves.nodes",
  "fleet-leaves.leaves",
  "fleet-leaves.concurrency",
  "fleet-leaves.settleSeconds",
  "fleet-leaves.gogc",
  "fleet-leaves.gomemlimitMB",
]);
