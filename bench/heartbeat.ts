/**
 * Heartbeat ingest over the real protocol, against its natural baseline in the same run: NATS
 * request/reply with a trivial responder, the same messaging pattern with nothing behind it.
 *
 * One nats-server; `shoal serve` (its own process, the compiled CLI) on it; a trivial responder
 * (its own process) on the same server under another subject root. N nodes join over NATS, then
 * one load generator (this process) sends heartbeats, `inFlight` outstanding at all times, spread
 * over the nodes and a few connections — to the orchestrator in one round, to the responder in
 * the other, alternating (ABBA) so drifting machine load hits both alike. The ratio is the
 * median of the rounds' ratios. The orchestrator's /metrics says how many heartbeats it
 * counted and that they wrote no event.
 *
 *   npm run bench -- --only heartbeat [--set heartbeat.nodes=500 --set heartbeat.inFlight=256 --set heartbeat.seconds=5 --set heartbeat.rounds=4]
 *
 * The node keys are not enforced here (an external, open nats-server): enforcement is the
 * nats-server's work, the same for both sides; the orchestrator's handler does the same either way.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, nkeys, type NatsConnection } from "nats";
import pino from "pino";
import { encode } from "../src/transport/codec.ts";
import { ComputeClient } from "../src/transport/compute-client.ts";
import { EmbeddedNatsServer } from "../src/transport/embedded-nats-server.ts";
import { computeSubject } from "../src/transport/subjects.ts";
import type { NodeInfo } from "../src/events/catalog/node-info.ts";
import { setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { startChild } from "./support/child-process.ts";
import { freePort } from "./support/free-port.ts";
import { requestLoad, type LoadResult } from "./support/request-load.ts";
import { serveOrchestrator } from "./support/shoal-serve.ts";

const RESPONDER = join(import.meta.dirname, "support/trivial-responder.ts");
const BASELINE_ROOT = "bench.echo";
const RATIO_TARGET = 0.8;
const JOIN_CONCURRENCY = 100;

function info(nodeId: string): NodeInfo {
  return {
    NodeID: nodeId,
    NodeType: "Compute",
    Hostname: nodeId,
    Labels: {},
    ComputeNodeInfo: { ExecutionEngines: [], Publishers: [], StorageSources: [], MaxCapacity: {}, MaxJobRequirements: {} },
    BacalhauVersion: { GitVersion: "bench", GOOS: "linux", GOARCH: "x64" },
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// A reply is Accepted when its msgpack map says so; both responders send the same bytes for it.
const ACCEPTED = Buffer.from(encode({ Accepted: true }));
const accepted = (data: Uint8Array) => Buffer.compare(Buffer.from(data.buffer, data.byteOffset, data.byteLength), ACCEPTED) === 0;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "heartbeat.nodes", options.quick ? 50 : 500);
  const inFlight = setting(options, "heartbeat.inFlight", options.quick ? 32 : 256);
  const seconds = setting(options, "heartbeat.seconds", options.quick ? 1 : 5);
  const rounds = setting(options, "heartbeat.rounds", options.quick ? 1 : 4);
  const connectionCount = setting(options, "heartbeat.connections", 4);
  const { log } = options;

  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  try {
    const natsDir = mkdtempSync(join(tmpdir(), "shoal-bench-nats-"));
    cleanups.push(() => rmSync(natsDir, { recursive: true, force: true }));
    const server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port: await freePort(), dir: natsDir, logger: pino({ level: "silent" }) });
    cleanups.push(() => server.stop());

    const token = randomBytes(16).toString("hex");
    const orchestrator = await serveOrchestrator({
      "Orchestrator.NATS.URL": server.url,
      "Orchestrator.Auth.Token": token,
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      // Nodes are silent between rounds: nobody may be declared failed meanwhile.
      "Orchestrator.NodeManager.DisconnectTimeout": "1h",
      "Orchestrator.NodeManager.UnknownTimeout": "2h",
    });
    cleanups.push(() => orchestrator.stop());
    const responder = await startChild(process.execPath, ["--import", "tsx", RESPONDER, server.url, `${BASELINE_ROOT}.*.*`, "bench-baseline"], "ready");
    cleanups.push(() => responder.stop());

    const connections: NatsConnection[] = [];
    for (let i = 0; i < connectionCount; i++) connections.push(await connect({ servers: server.url, name: `bench-load-${i}` }));
    cleanups.push(() => Promise.all(connections.map((nc) => nc.close())));

    log(`  joining ${nodes} nodes`);
    const ids = Array.from({ length: nodes }, (_, i) => `bench-node-${i}`);
    const joinStarted = performance.now();
    for (let i = 0; i < ids.length; i += JOIN_CONCURRENCY) {
      await Promise.all(
        ids.slice(i, i + JOIN_CONCURRENCY).map(async (id, j) => {
          const pair = nkeys.createUser();
          const reply = await new ComputeClient(connections[j % connections.length]!, id, 30_000).join(info(id), { publicKey: pair.getPublicKey(), sign: (d) => pair.sign(d) }, token);
          if (!reply.Accepted) throw new Error(`join of ${id} refused: ${reply.Reason}`);
        }),
      );
    }
    log(`  joined in ${((performance.now() - joinStarted) / 1000).toFixed(1)} s`);

    const sequences = new Array<number>(nodes).fill(0);
    const heartbeat = (subjectOf: (nodeId: string) => string) => (i: number) => {
      const n = i % nodes;
      const nodeId = ids[n]!;
      return { subject: subjectOf(nodeId), data: encode({ MessageID: randomUUID(), NodeID: nodeId, Sequence: ++sequences[n]! }) };
    };
    const toOrchestrator = heartbeat((id) => computeSubject(id, "heartbeat"));
    const toBaseline = heartbeat((id) => `${BASELINE_ROOT}.${id}.heartbeat`);
    const load = (request: (i: number) => { subject: string; data: Uint8Array }) =>
      requestLoad({ connections, request, accepted, inFlight, seconds, warmupSeconds: Math.min(1, seconds / 2) });

    const before = await orchestrator.metrics();
    const ingest: LoadResult[] = [];
    const baseline: LoadResult[] = [];
    const lagMax: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // ABBA: baseline first in even rounds, ingest first in odd ones.
      const order = round % 2 === 0 ? (["baseline", "ingest"] as const) : (["ingest", "baseline"] as const);
      for (const side of order) {
        if (side === "ingest") {
          await orchestrator.metrics(); // resets the event-loop lag window to this load
          const result = await load(toOrchestrator);
          lagMax.push((await orchestrator.metrics()).get("shoal_event_loop_lag_max_seconds") ?? NaN);
          ingest.push(result);
        } else baseline.push(await load(toBaseline));
        const r = (side === "ingest" ? ingest : baseline).at(-1)!;
        log(`  round ${round + 1} ${side.padEnd(8)} ${Math.round(r.perSecond).toLocaleString("en")}/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms${r.failed > 0 ? `  FAILED ${r.failed}: ${r.firstError}` : ""}`);
      }
    }
    const after = await orchestrator.metrics();
    const failures = [...ingest, ...baseline].reduce((sum, r) => sum + r.failed, 0);
    if (failures > 0) throw new Error(`${failures} heartbeats failed or were refused: ${[...ingest, ...baseline].find((r) => r.firstError)?.firstError}`);
    const counted = (after.get("shoal_heartbeats_received_total") ?? NaN) - (before.get("shoal_heartbeats_received_total") ?? NaN);
    const answered = ingest.reduce((sum, r) => sum + r.completed, 0);
    // Heartbeats answered outside the measured windows (warm-up, the tail) are counted by the orchestrator too.
    if (!(counted >= answered)) throw new Error(`the orchestrator counted ${counted} heartbeats but ${answered} were answered`);
    const eventsWritten = (after.get("shoal_events_appended_total") ?? NaN) - (before.get("shoal_events_appended_total") ?? NaN);

    const ratios = ingest.map((r, i) => r.perSecond / baseline[i]!.perSecond);
    const spread = (results: readonly LoadResult[]) => `${Math.round(Math.min(...results.map((r) => r.perSecond))).toLocaleString("en")}–${Math.round(Math.max(...results.map((r) => r.perSecond))).toLocaleString("en")}/s`;
    const figures: BenchFigure[] = [
      {
        name: "heartbeat ingest (request/reply)",
        value: median(ingest.map((r) => r.perSecond)),
        unit: "/s",
        baseline: { name: "bare NATS request/reply, trivial responder", value: median(baseline.map((r) => r.perSecond)) },
        ratio: median(ratios),
        target: { on: "ratio", min: RATIO_TARGET },
        note: `median of ${rounds} paired rounds; ratios ${ratios.map((x) => x.toFixed(2)).join(", ")}; ingest ${spread(ingest)}, baseline ${spread(baseline)}`,
      },
      { name: "heartbeat round trip p99 under that load", value: median(ingest.map((r) => r.p99Ms)), unit: "ms", baseline: { name: "trivial responder p99", value: median(baseline.map((r) => r.p99Ms)) } },
      { name: "events written by heartbeats", value: eventsWritten, unit: "events", target: { on: "value", max: 0 } },
      { name: "orchestrator event-loop lag, max during ingest", value: median(lagMax) * 1000, unit: "ms", note: `median over rounds; per round ${lagMax.map((s) => (s * 1000).toFixed(0)).join(", ")} ms` },
    ];
    return { figures, parameters: { nodes, inFlight, seconds, rounds, connections: connectionCount, heartbeatsCounted: counted } };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
