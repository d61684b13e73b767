/**
 * Heartbeat ingest over the real protocol, against its natural baseline in the same run: the
 * same fire-and-forget publishes, from the same publishers, counted by a bare NATS subscriber.
 *
 * One nats-server; `shoal serve` (its own process, the compiled CLI) on it; a bare counter (its
 * own process) on the same server under another subject root. N nodes join over NATS, then the
 * load generator (this process) publishes `perRound` heartbeats as fast as it can, spread over
 * the nodes and a few connections — to the orchestrator in one round, to the counter in the
 * other, alternating (ABBA) so drifting machine load hits both alike. A round's rate is
 * `perRound` ÷ the time from its first publish until the receiver has counted them all (the
 * orchestrator's `shoal_heartbeats_received_total`, the counter's own count, polled; the moment
 * the last one arrived interpolated between polls). The ratio is the median of the rounds' ratios.
 *
 * npm run bench -- --only heartbeat [--set heartbeat.nodes=500 --set heartbeat.perRound=400000 --set
 * heartbeat.rounds=8]
 *
 * The node keys are not enforced here (an external, open nats-server): enforcement is the
 * nats-server's work, the same for both sides; the orchestrator's handler does the same either way.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { computeSubject } from "../src/transport/subjects.ts";
import { setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { startChild } from "./support/child-process.ts";
import { startBenchNats } from "./support/bench-nats.ts";
import { drain, heartbeats, joinNodes, median, type DrainResult } from "./support/heartbeat-load.ts";
import { serveOrchestrator } from "./support/shoal-serve.ts";

const COUNTER = join(import.meta.dirname, "support/bare-counter.ts");
/**
 * As long as the orchestrator's `shoal.compute` (checked below): both receivers parse MSG lines of
 * the same length, so the same bytes a heartbeat.
 */
const BASELINE_ROOT = "bench.counted";
const COUNT_SUBJECT = "bench.counter.count";
const RATIO_TARGET = 0.8;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "heartbeat.nodes", options.quick ? 50 : 500);
  const perRound = setting(options, "heartbeat.perRound", options.quick ? 20_000 : 400_000);
  const rounds = setting(options, "heartbeat.rounds", options.quick ? 1 : 8);
  const connectionCount = setting(options, "heartbeat.connections", 4);
  const { log } = options;

  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  try {
    const server = await startBenchNats(cleanups);

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
    const counter = await startChild(
      process.execPath,
      ["--import", "tsx", COUNTER, server.url, `${BASELINE_ROOT}.*.heartbeat`, "bench-baseline", COUNT_SUBJECT],
      "ready",
    );
    cleanups.push(() => counter.stop());

    const connections: NatsConnection[] = [];
    for (let i = 0; i < connectionCount; i++)
      connections.push(await connect({ servers: server.url, name: `bench-load-${i}` }));
    cleanups.push(() => Promise.all(connections.map((nc) => nc.close())));
    // Every heartbeat must be accepted: a refusal would come here.
    let refusals = 0;
    connections[0]!.subscribe("shoal.work.*.heartbeat-refused", { callback: () => void refusals++ });

    log(`  joining ${nodes} nodes`);
    const ids = Array.from({ length: nodes }, (_, i) => `bench-node-${i}`);
    const joinStarted = performance.now();
    await joinNodes(connections, ids, token);
    log(`  joined in ${((performance.now() - joinStarted) / 1000).toFixed(1)} s`);

    const sequences = new Array<number>(nodes).fill(0);
    const heartbeat = (subjects: readonly string[]) => heartbeats(ids, sequences, subjects);
    const toOrchestrator = heartbeat(ids.map((id) => computeSubject(id, "heartbeat")));
    const toBaseline = heartbeat(ids.map((id) => `${BASELINE_ROOT}.${id}.heartbeat`));
    if (`${BASELINE_ROOT}.${ids[0]}.heartbeat`.length !== computeSubject(ids[0]!, "heartbeat").length)
      throw new Error("the baseline's subjects must be as long as the orchestrator's");
    const orchestratorCount = async () => (await orchestrator.metrics()).get("shoal_heartbeats_received_total") ?? NaN;
    const orchestratorPid = orchestrator.process.child.pid;
    const counterPid = counter.child.pid;
    const decoder = new TextDecoder();
    const baselineCount = async () =>
      Number(decoder.decode((await connections[0]!.request(COUNT_SUBJECT, undefined, { timeout: 10_000 })).data));

    log("  warming up both receivers");
    await drain(connections, Math.ceil(perRound / 5), toBaseline, baselineCount, counterPid);
    await drain(connections, Math.ceil(perRound / 5), toOrchestrator, orchestratorCount, orchestratorPid);

    const before = await orchestrator.metrics();
    const ingest: DrainResult[] = [];
    const baseline: DrainResult[] = [];
    const lagMax: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // ABBA: baseline first in even rounds, ingest first in odd ones.
      const order = round % 2 === 0 ? (["baseline", "ingest"] as const) : (["ingest", "baseline"] as const);
      for (const side of order) {
        if (side === "ingest") {
          // One scrape per poll gives the count and the event-loop lag since the previous scrape
          // (each scrape starts a new window): the round's worst is the largest after the first.
          const lags: number[] = [];
          const result = await drain(
            connections,
            perRound,
            toOrchestrator,
            async () => {
              const samples = await orchestrator.metrics();
              lags.push(samples.get("shoal_event_loop_lag_max_seconds") ?? NaN);
              return samples.get("shoal_heartbeats_received_total") ?? NaN;
            },
            orchestratorPid,
          );
          lagMax.push(Math.max(...lags.slice(1)));
          ingest.push(result);
        } else baseline.push(await drain(connections, perRound, toBaseline, baselineCount, counterPid));
        const r = (side === "ingest" ? ingest : baseline).at(-1)!;
        log(
          `  round ${round + 1} ${side.padEnd(8)} ${Math.round(r.perSecond).toLocaleString("en")}/s  (${r.seconds.toFixed(2)} s; published in ${r.publishSeconds.toFixed(2)} s; receiver CPU ${r.cpuMicros.toFixed(2)} µs a heartbeat)`,
        );
      }
    }
    await connections[0]!.flush();
    const after = await orchestrator.metrics();
    if (refusals > 0) throw new Error(`${refusals} heartbeats were refused`);
    const eventsWritten =
      (after.get("shoal_events_appended_total") ?? NaN) - (before.get("shoal_events_appended_total") ?? NaN);
    const counted =
      (after.get("shoal_heartbeats_received_total") ?? NaN) - (before.get("shoal_heartbeats_received_total") ?? NaN);

    const ratios = ingest.map((r, i) => r.perSecond / baseline[i]!.perSecond);
    const spread = (results: readonly DrainResult[]) =>
      `${Math.round(Math.min(...results.map((r) => r.perSecond))).toLocaleString("en")}–${Math.round(Math.max(...results.map((r) => r.perSecond))).toLocaleString("en")}/s`;
    const publishShare = median([...ingest, ...baseline].map((r) => r.publishSeconds / r.seconds));
    const figures: BenchFigure[] = [
      {
        name: "heartbeat ingest (published)",
        value: median(ingest.map((r) => r.perSecond)),
        unit: "/s",
        baseline: {
          name: "bare NATS subscriber counting the same publishes",
          value: median(baseline.map((r) => r.perSecond)),
        },
        ratio: median(ratios),
        target: { on: "ratio", min: RATIO_TARGET },
        note: `median of ${rounds} paired rounds of ${perRound.toLocaleString("en")}; ratios ${ratios.map((x) => x.toFixed(2)).join(", ")}; ingest ${spread(ingest)}, baseline ${spread(baseline)}; publishing took ${Math.round(publishShare * 100)}% of a round (median)`,
      },
      {
        name: "receiver CPU per heartbeat",
        value: median(ingest.map((r) => r.cpuMicros)),
        unit: "µs",
        baseline: { name: "bare NATS subscriber's", value: median(baseline.map((r) => r.cpuMicros)) },
        note: `median of rounds, all threads, polling included; orchestrator ${ingest.map((r) => r.cpuMicros.toFixed(2)).join(", ")}; counter ${baseline.map((r) => r.cpuMicros.toFixed(2)).join(", ")}`,
      },
      { name: "events written by heartbeats", value: eventsWritten, unit: "events", target: { on: "value", max: 0 } },
      {
        name: "orchestrator event-loop lag, max during ingest",
        value: median(lagMax) * 1000,
        unit: "ms",
        note: `median over rounds; per round ${lagMax.map((s) => (s * 1000).toFixed(0)).join(", ")} ms`,
      },
    ];
    return {
      figures,
      parameters: { nodes, perRound, rounds, connections: connectionCount, heartbeatsCounted: counted, refusals },
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
