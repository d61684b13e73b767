/**
 * How soon another orchestrator serves a partition whose owner died or stopped, read from the lease bucket.
 *
 * One nats-server with JetStream, the KurrentDB stand-in, and `orchestrators` `shoal serve` processes in cluster mode
 * (bench/support/bench-cluster.ts). Once every partition is held and shared fairly, each round ends one owner — by
 * turns kill -9 (no hand-back: its leases must run out) and SIGTERM (a graceful stop that hands them back) — and
 * measures from the signal until every partition's lease in SHOAL_LEASES is held by a running orchestrator (a watch
 * on the bucket; the duties' leases are reported beside it). A fresh orchestrator then joins, and the next round waits
 * until the cluster has settled again.
 *
 * npm run bench -- --only cluster-failover [--set cluster-failover.rounds=2 --set cluster-failover.orchestrators=3
 * --set cluster-failover.partitions=64]
 *
 * Targets: a dead owner's partitions served again within LeaseTTL + 2 s; a graceful handoff within 2 s.
 */
import { loadavg } from "node:os";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { BenchCluster, type BenchMember } from "./support/bench-cluster.ts";

/** The shortest TTL the cluster takes (and its default). */
const LEASE_TTL_MS = 15_000;
const KILL_SLACK_MS = 2_000;
const HANDOFF_TARGET_MS = 2_000;
const DUTIES = ["publisher", "jobs"];
const SETTLE_MS = 60_000;

const load = () => loadavg()[0]!.toFixed(1);
const spread = (values: readonly number[]) =>
  `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)} s over ${values.length} rounds: ` +
  values.map((v) => v.toFixed(2)).join(", ");

interface Round {
  readonly partitionsS: number;
  readonly dutiesS: number;
  readonly load: string;
}

/** Ends `victim` as `how` says and times until its partitions, and the duties, are held by the running ones. */
async function endOwner(cluster: BenchCluster, victim: BenchMember, how: "kill" | "stop"): Promise<Round> {
  cluster.remove(victim);
  const bound = LEASE_TTL_MS + 30_000;
  const partitions = cluster.when(() => cluster.partitionsServed(), bound, `${victim.nodeId}'s partitions`);
  const duties = cluster.when(() => cluster.dutiesServed(DUTIES), bound, "the duties");
  const at = performance.now();
  const ended =
    how === "kill"
      ? new Promise<void>((resolve) => {
          victim.served.process.child.once("exit", () => resolve());
          victim.served.process.child.kill("SIGKILL");
        })
      : victim.served.process.stop();
  const [partitionsAt, dutiesAt] = await Promise.all([partitions, duties, ended]);
  await victim.served.stop();
  return { partitionsS: (partitionsAt - at) / 1000, dutiesS: (dutiesAt - at) / 1000, load: load() };
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const rounds = setting(options, "cluster-failover.rounds", options.quick ? 1 : 2);
  const size = setting(options, "cluster-failover.orchestrators", 3);
  const partitions = setting(options, "cluster-failover.partitions", 64);
  const { log } = options;
  const cluster = await BenchCluster.start({
    partitions,
    settings: { "Orchestrator.Cluster.LeaseTTL": `${LEASE_TTL_MS}ms` },
  });
  const kills: Round[] = [];
  const stops: Round[] = [];
  try {
    for (let i = 0; i < size; i++) await cluster.add();
    await cluster.watchLeases();
    for (let round = 0; round < rounds; round++) {
      for (const how of ["kill", "stop"] as const) {
        await cluster.when(
          () => cluster.balanced() && cluster.dutiesServed(DUTIES),
          SETTLE_MS,
          "settling before the round",
        );
        // The one holding the jobs duty, so that its duties move too.
        const victim =
          cluster.members.find((m) => cluster.holders.get("duties.jobs") === m.nodeId) ?? cluster.members[0]!;
        const result = await endOwner(cluster, victim, how);
        (how === "kill" ? kills : stops).push(result);
        log(
          `  round ${round + 1} ${how === "kill" ? "kill -9" : "SIGTERM"} ${victim.nodeId}: partitions served again ` +
            `after ${result.partitionsS.toFixed(2)} s, duties after ${result.dutiesS.toFixed(2)} s (load ${result.load})`,
        );
        await cluster.add();
      }
    }
  } finally {
    await cluster.close();
  }
  const worst = (rs: readonly Round[], pick: (r: Round) => number) => Math.max(...rs.map(pick));
  const figures: BenchFigure[] = [
    {
      name: "a killed owner's partitions served again (kill -9 → every partition held by a running one)",
      value: worst(kills, (r) => r.partitionsS),
      unit: "s",
      baseline: { name: "LeaseTTL", value: LEASE_TTL_MS / 1000 },
      target: { on: "value", max: (LEASE_TTL_MS + KILL_SLACK_MS) / 1000 },
      note: `worst of ${spread(kills.map((r) => r.partitionsS))}; duties ${spread(kills.map((r) => r.dutiesS))}; load ${kills.map((r) => r.load).join(", ")}`,
    },
    {
      name: "a graceful handoff (SIGTERM → every partition held by a running one)",
      value: worst(stops, (r) => r.partitionsS),
      unit: "s",
      target: { on: "value", max: HANDOFF_TARGET_MS / 1000 },
      note: `worst of ${spread(stops.map((r) => r.partitionsS))}; duties ${spread(stops.map((r) => r.dutiesS))}; load ${stops.map((r) => r.load).join(", ")}`,
    },
  ];
  return { figures, parameters: { rounds, orchestrators: size, partitions, leaseTtlMs: LEASE_TTL_MS } };
}

await runStandalone(import.meta.url, run, ["cluster-failover.rounds", "cluster-failover.orchestrators"]);
