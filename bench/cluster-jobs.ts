/**
 * Job submissions spread over the APIs of several orchestrators.
 *
 * A bench cluster (bench/support/bench-cluster.ts) of `orchestrators` `shoal serve` processes and a `shoal sim` fleet
 * of `nodes` virtual nodes that run their work at once. Then, from `connections` concurrent clients, each bound to one
 * of the APIs in turn (connection i to orchestrator i mod n), over connections opened first: a baseline, the API's
 * own rate and latency on a trivial authenticated GET (`/api/v1/agent/alive`); then `jobs` batch jobs submitted with
 * PUT /api/v1/orchestrator/jobs (Count 1, tiny resources). Latency is request sent → answer read. The run then waits
 * up to `completionSeconds` for every job to end, and counts those Completed (the jobs duty's holder places them, the
 * nodes report back). Last, it reads the store for when each job was first placed: how many were placed while the
 * submissions went on, and how long a job waited for its placement.
 *
 * npm run bench -- --only cluster-jobs [--set cluster-jobs.orchestrators=3 --set cluster-jobs.nodes=100
 * --set cluster-jobs.jobs=1500 --set cluster-jobs.connections=50 --set cluster-jobs.completionSeconds=60]
 *
 * Targets: submission p99 ≤ 50 ms at 50 clients; every job Completed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runStandalone, setting, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { BenchCluster } from "./support/bench-cluster.ts";
import { httpLoad, type HttpTarget } from "./support/http-load.ts";
import { machineCpuMs, processCpuMs } from "./support/process-cpu.ts";
import { batchJob, listJobs } from "./support/job-rest.ts";
import { placementTimeline } from "./support/placement-timeline.ts";
import { quantile } from "./support/quantile.ts";
import { startSimFleet, type SimFleet } from "./support/shoal-sim.ts";

const TARGET_SUBMIT_P99_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg()[0]!.toFixed(1);
const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

export async function run(options: BenchOptions): Promise<BenchResult> {
  const size = setting(options, "cluster-jobs.orchestrators", 3);
  const nodes = setting(options, "cluster-jobs.nodes", options.quick ? 20 : 100);
  const jobs = setting(options, "cluster-jobs.jobs", options.quick ? 150 : 1_500);
  const connections = setting(options, "cluster-jobs.connections", 50);
  const timeoutSeconds = setting(options, "cluster-jobs.timeoutSeconds", 300);
  const completionSeconds = setting(options, "cluster-jobs.completionSeconds", 60);
  const { log } = options;
  const cluster = await BenchCluster.start({ partitions: 64 });
  const tokenDir = mkdtempSync(join(tmpdir(), "shoal-bench-token-"));
  let fleet: SimFleet | undefined;
  try {
    for (let i = 0; i < size; i++) await cluster.add();
    await cluster.watchLeases();
    await cluster.when(() => cluster.balanced() && cluster.dutiesServed(["jobs"]), 60_000, "the cluster settling");
    const tokenFile = join(tokenDir, "join-token");
    writeFileSync(tokenFile, cluster.token, { mode: 0o600 });
    log(`  ${nodes} sim nodes joining ${size} orchestrators (load ${load()})`);
    fleet = await startSimFleet({
      nodes,
      prefix: "clusterjobs",
      natsUrl: cluster.natsUrl,
      tokenFile,
      joinRatePerSecond: 1_000,
      heartbeatMs: 5_000,
      runMs: 0,
    });
    for (const deadline = performance.now() + 120_000; ; await sleep(250)) {
      const broken = fleet.exited();
      if (broken) throw new Error(broken);
      const p = fleet.progress();
      if (p !== undefined && p.registered >= nodes && p.joining === 0) break;
      if (performance.now() > deadline) throw new Error(`the fleet did not join in time: ${JSON.stringify(p)}`);
    }

    const targets: HttpTarget[] = cluster.members.map((m) => ({
      url: m.served.apiUrl,
      headers: { authorization: `Bearer ${m.served.adminKey}` },
    }));
    const open = { method: "GET", path: "/api/v1/agent/alive" } as const;
    const baseline = await httpLoad({
      url: targets,
      connections,
      seconds: options.quick ? 2 : 5,
      warmupSeconds: 1,
      request: () => open,
      open,
    });
    if (baseline.failedInAll > 0) throw new Error(`the baseline GET failed: ${baseline.firstError ?? "?"}`);
    log(`  baseline GET /api/v1/agent/alive: ${Math.round(baseline.perSecond)}/s, p99 ${baseline.p99Ms.toFixed(1)} ms`);

    log(`  submitting ${jobs} jobs from ${connections} clients over ${size} APIs (load ${load()})`);
    let issued = 0;
    // Who had the CPU while the jobs were submitted: each orchestrator, the store, the fleet, nats-server, this load
    // generator, and the machine as a whole (neighbours included).
    const pids = [
      ...cluster.members.map((m) => m.served.process.child.pid),
      cluster.storePid,
      fleet.process.child.pid,
      cluster.natsPid,
    ];
    const cpuOf = () => [...pids.map(processCpuMs), ownCpuMs(), machineCpuMs().busy];
    const cpuBefore = cpuOf();
    const started = performance.now();
    const submitted = await httpLoad({
      url: targets,
      connections,
      // A bound, not a duration: the load stops once every job is sent.
      seconds: timeoutSeconds,
      warmupSeconds: 0,
      request: () => ({ method: "PUT", path: "/api/v1/orchestrator/jobs", body: batchJob(issued++) }),
      until: () => issued >= jobs,
      open,
    });
    const submitLoad = load();
    log(
      `    ${Math.round(submitted.perSecond)} submissions/s, p50 ${submitted.p50Ms.toFixed(1)} ms, ` +
        `p99 ${submitted.p99Ms.toFixed(1)} ms, max ${submitted.maxMs.toFixed(0)} ms (load ${submitLoad})`,
    );
    const windowMs = performance.now() - started;
    const spent = cpuOf().map((ms, i) => ms - cpuBefore[i]!);
    const perJob = (i: number) => (spent[i]! / jobs).toFixed(2);
    const cores = (i: number) => (spent[i]! / windowMs).toFixed(2);
    const cpuPerSubmission =
      cluster.members.map((m, i) => `${m.nodeId} ${perJob(i)}`).join(", ") + `, store ${perJob(size)} ms`;
    const ours = spent.slice(0, -1).reduce((a, b) => a + b, 0);
    const cpuShares =
      `orchestrators ${(spent.slice(0, size).reduce((a, b) => a + b, 0) / windowMs).toFixed(2)}, ` +
      `store ${cores(size)}, fleet ${cores(size + 1)}, nats-server ${cores(size + 2)}, clients ${cores(size + 3)}; ` +
      `machine ${cores(size + 4)} of ${cpus().length}, ${((spent.at(-1)! - ours) / windowMs).toFixed(2)} of them ` +
      `outside this bench`;
    log(`    CPU per submission: ${cpuPerSubmission}; jobs duty on ${cluster.holders.get("duties.jobs") ?? "?"}`);
    log(`    cores busy while submitting: ${cpuShares}`);
    if (submitted.failedInAll > 0)
      throw new Error(`${submitted.failedInAll} submissions failed; first: ${submitted.firstError ?? "?"}`);
    if (submitted.succeededInAll !== jobs)
      throw new Error(`${submitted.succeededInAll} submissions answered 200, expected ${jobs}`);

    // Every job should end Completed on the sim fleet (the jobs duty places them, the nodes report back); a job that
    // ends otherwise, or is not done in time, is counted apart.
    const first = cluster.members[0]!.served;
    const states = new Map<string, number>();
    const doneBy = performance.now() + completionSeconds * 1000;
    for (;;) {
      states.clear();
      for (const j of await listJobs(first.apiUrl, first.adminKey))
        states.set(j.State.StateType, (states.get(j.State.StateType) ?? 0) + 1);
      const ended = (states.get("Completed") ?? 0) + (states.get("Failed") ?? 0) + (states.get("Stopped") ?? 0);
      if (ended >= jobs || performance.now() > doneBy) break;
      await sleep(1_000);
    }
    const completed = states.get("Completed") ?? 0;
    const doneS = (performance.now() - started) / 1000;
    const byState = JSON.stringify(Object.fromEntries(states));
    log(`  ${completed} of ${jobs} jobs Completed ${doneS.toFixed(1)} s after the first submission: ${byState}`);
    // From the first submission until every job ended: placement, the nodes' reports and the follow-up included.
    const whole = cpuOf().map((ms, i) => ms - cpuBefore[i]!);
    const cpuPerJob =
      cluster.members.map((m, i) => `${m.nodeId} ${(whole[i]! / jobs).toFixed(2)}`).join(", ") +
      `, store ${(whole[size]! / jobs).toFixed(2)} ms`;
    log(`  CPU per job, submitted to ended: ${cpuPerJob}`);
    const timeline = await placementTimeline(cluster.storeUrl);
    const seconds = (ms: number | undefined) => `${((ms ?? NaN) / 1000).toFixed(1)} s`;
    const waits =
      `submitted → first placed p50 ${seconds(quantile(timeline.waitsMs, 0.5))}, ` +
      `p99 ${seconds(quantile(timeline.waitsMs, 0.99))}`;
    const placement =
      `the first ${seconds(timeline.firstPlacementMs)} after the first submission; ${waits}; ` +
      `per second submitted ${timeline.submittedPerSecond.join(" ")}, placed ${timeline.placedPerSecond.join(" ")}`;
    log(
      `  ${timeline.placedWhileSubmitting} of ${timeline.jobs} jobs placed while the submissions went on ` +
        `(${seconds(timeline.submittingMs)}); ${placement}`,
    );
    return {
      figures: [
        {
          name: `job submission p99, ${connections} clients over ${size} APIs`,
          value: submitted.p99Ms,
          unit: "ms",
          baseline: { name: "GET /api/v1/agent/alive p99, same clients", value: baseline.p99Ms },
          target: { on: "value", max: TARGET_SUBMIT_P99_MS },
          note:
            `p50 ${submitted.p50Ms.toFixed(1)} ms, max ${submitted.maxMs.toFixed(0)} ms; load ${submitLoad}; ` +
            `CPU per submission ${cpuPerSubmission}; cores busy ${cpuShares}`,
        },
        {
          name: "job submissions",
          value: submitted.perSecond,
          unit: "/s",
          baseline: { name: "GET /api/v1/agent/alive", value: baseline.perSecond },
        },
        {
          name: `jobs Completed within ${completionSeconds} s of the last submission`,
          value: completed,
          unit: "jobs",
          target: { on: "value", min: jobs },
          note:
            `${jobs} jobs on ${nodes} sim nodes; by state ${byState}, ${doneS.toFixed(1)} s after the first submission; ` +
            `CPU per job ${cpuPerJob}`,
        },
        {
          name: "jobs placed before the last submission",
          value: timeline.placedWhileSubmitting,
          unit: "jobs",
          note: `of ${timeline.jobs}, submitted over ${seconds(timeline.submittingMs)}; ${placement}`,
        },
      ],
      parameters: { orchestrators: size, nodes, jobs, connections },
    };
  } finally {
    await fleet?.process.stop();
    await cluster.close();
    rmSync(tokenDir, { recursive: true, force: true });
  }
}

await runStandalone(import.meta.url, run, ["cluster-jobs.orchestrators", "cluster-jobs.jobs"]);
