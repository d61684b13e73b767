/**
 * Heartbeat ingest when several orchestrators each hear every heartbeat (no queue group in cluster mode), against
 * bare NATS subscribers of the same fan-out in the same run.
 *
 * A bench cluster (bench/support/bench-cluster.ts) of `orchestrators` `shoal serve` processes, and as many bare
 * counters (bench/support/bare-counter.ts, each its own process and its own queue group, so each gets every publish)
 * under another subject root of the same length. N nodes join (each answered by its partition's owner), then rounds
 * of `perRound` heartbeats, published as agents publish them (bench/support/heartbeat-load.ts), go to the
 * orchestrators in one round and to the counters in the other, ABBA. A round's rate is `perRound` ÷ the time until
 * every receiver of its side had counted them all: what each orchestrator takes while the others take the same.
 *
 * npm run bench -- --only cluster-heartbeat [--set cluster-heartbeat.orchestrators=2 --set cluster-heartbeat.nodes=500
 * --set cluster-heartbeat.perRound=400000 --set cluster-heartbeat.rounds=4]
 *
 * Target: ≥ 0.8 × the bare subscribers.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { computeSubject } from "../src/transport/subjects.ts";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { BenchCluster } from "./support/bench-cluster.ts";
import { startChild, type RunningChild } from "./support/child-process.ts";
import { drain, heartbeats, joinNodes, median, type DrainResult } from "./support/heartbeat-load.ts";

const COUNTER = join(import.meta.dirname, "support/bare-counter.ts");
/** As long as `shoal.compute`: every receiver parses MSG lines of the same length. */
const BASELINE_ROOT = "bench.counted";
const RATIO_TARGET = 0.8;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const size = setting(options, "cluster-heartbeat.orchestrators", 2);
  const nodes = setting(options, "cluster-heartbeat.nodes", options.quick ? 50 : 500);
  const perRound = setting(options, "cluster-heartbeat.perRound", options.quick ? 20_000 : 400_000);
  const rounds = setting(options, "cluster-heartbeat.rounds", options.quick ? 1 : 4);
  const { log } = options;
  const cluster = await BenchCluster.start({
    partitions: 64,
    settings: {
      // Nodes are silent between rounds: nobody may be declared failed meanwhile.
      "Orchestrator.NodeManager.DisconnectTimeout": "1h",
      "Orchestrator.NodeManager.UnknownTimeout": "2h",
    },
  });
  const counters: RunningChild[] = [];
  const connections: NatsConnection[] = [];
  try {
    for (let i = 0; i < size; i++) await cluster.add();
    await cluster.watchLeases();
    // Joins are answered by a node's partition owner: every partition must have one first.
    await cluster.when(() => cluster.balanced(), 60_000, "the cluster settling");
    for (let i = 0; i < size; i++)
      counters.push(
        await startChild(
          process.execPath,
          ["--import", "tsx", COUNTER, cluster.natsUrl, `${BASELINE_ROOT}.*.heartbeat`, `bench-${i}`, `bench.c.${i}`],
          "ready",
        ),
      );
    for (let i = 0; i < 4; i++) connections.push(await connect({ servers: cluster.natsUrl, name: `bench-load-${i}` }));
    let refusals = 0;
    connections[0]!.subscribe("shoal.work.*.heartbeat-refused", { callback: () => void refusals++ });

    log(`  joining ${nodes} nodes to ${size} orchestrators`);
    const ids = Array.from({ length: nodes }, (_, i) => `bench-node-${i}`);
    await joinNodes(connections, ids, cluster.token);
    const sequences = new Array<number>(nodes).fill(0);
    const toOrchestrators = heartbeats(
      ids,
      sequences,
      ids.map((id) => computeSubject(id, "heartbeat")),
    );
    const toCounters = heartbeats(
      ids,
      sequences,
      ids.map((id) => `${BASELINE_ROOT}.${id}.heartbeat`),
    );
    const members = cluster.members.map((m) => m.served);
    const orchestratorsCount = async () =>
      Math.min(
        ...(
          await Promise.all(members.map(async (m) => (await m.metrics()).get("shoal_heartbeats_received_total")))
        ).map((n) => n ?? NaN),
      );
    const decoder = new TextDecoder();
    const countersCount = async () =>
      Math.min(
        ...(await Promise.all(
          counters.map(async (_, i) =>
            Number(
              decoder.decode((await connections[0]!.request(`bench.c.${i}`, undefined, { timeout: 10_000 })).data),
            ),
          ),
        )),
      );
    const orchestratorPid = members[0]!.process.child.pid;
    const counterPid = counters[0]!.child.pid;

    log("  warming up both sides");
    await drain(connections, Math.ceil(perRound / 5), toCounters, countersCount, counterPid);
    await drain(connections, Math.ceil(perRound / 5), toOrchestrators, orchestratorsCount, orchestratorPid);
    const appended = async () =>
      (
        await Promise.all(members.map(async (m) => (await m.metrics()).get("shoal_events_appended_total") ?? NaN))
      ).reduce((a, b) => a + b);
    const appendedBefore = await appended();
    const ingest: DrainResult[] = [];
    const baseline: DrainResult[] = [];
    const loads: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (["baseline", "ingest"] as const) : (["ingest", "baseline"] as const);
      for (const side of order) {
        const r =
          side === "ingest"
            ? await drain(connections, perRound, toOrchestrators, orchestratorsCount, orchestratorPid)
            : await drain(connections, perRound, toCounters, countersCount, counterPid);
        (side === "ingest" ? ingest : baseline).push(r);
        loads.push(loadavg()[0]!);
        log(
          `  round ${round + 1} ${side.padEnd(8)} ${Math.round(r.perSecond).toLocaleString("en")}/s each ` +
            `(${r.seconds.toFixed(2)} s; CPU ${r.cpuMicros.toFixed(2)} µs a heartbeat; load ${loads.at(-1)!.toFixed(1)})`,
        );
      }
    }
    const eventsWritten = (await appended()) - appendedBefore;
    if (refusals > 0) throw new Error(`${refusals} heartbeats were refused`);
    const ratios = ingest.map((r, i) => r.perSecond / baseline[i]!.perSecond);
    const figures: BenchFigure[] = [
      {
        name: `heartbeat ingest per orchestrator, each of ${size} hearing every heartbeat`,
        value: median(ingest.map((r) => r.perSecond)),
        unit: "/s",
        baseline: {
          name: `bare NATS subscriber, each of ${size} counting every publish`,
          value: median(baseline.map((r) => r.perSecond)),
        },
        ratio: median(ratios),
        target: { on: "ratio", min: RATIO_TARGET },
        note:
          `median of ${rounds} paired rounds of ${perRound.toLocaleString("en")}; ratios ` +
          `${ratios.map((x) => x.toFixed(2)).join(", ")}; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
      },
      {
        name: "receiver CPU per heartbeat (one orchestrator; one counter)",
        value: median(ingest.map((r) => r.cpuMicros)),
        unit: "µs",
        baseline: { name: "bare NATS subscriber's", value: median(baseline.map((r) => r.cpuMicros)) },
      },
      { name: "events written by heartbeats", value: eventsWritten, unit: "events", target: { on: "value", max: 0 } },
    ];
    return { figures, parameters: { orchestrators: size, nodes, perRound, rounds } };
  } finally {
    await Promise.all(connections.map((nc) => nc.close()));
    await Promise.all(counters.map((c) => c.stop()));
    await cluster.close();
  }
}

await runStandalone(import.meta.url, run, ["cluster-heartbeat.orchestrators", "cluster-heartbeat.nodes"]);
