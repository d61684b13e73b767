/**
 * Jobs end to end: a real `shoal serve` (the compiled CLI, its own process, its embedded
 * nats-server and SQLite) and a real `shoal sim --run-work` fleet (its own process, N virtual
 * nodes joined over the protocol, answering bids at once and running their work in memory), then
 * M batch jobs (Count 1, tiny resources, `SHOAL_SIM_RUN=0s`) submitted over REST by 50 concurrent
 * clients with the admin key. The whole path is measured: submitted → stored → placed → bid
 * accepted by the node → run → completed.
 *
 * Figures: submissions/s and submission p50/p99 (request sent → answer read); end-to-end
 * completed jobs/s, from the first submission to the last job's Completed (its ModifyTime, read
 * over the API once every job is Completed; a job that failed fails the run); placements/s from the
 * jobs' histories (first submission → the last execution created); and, as a same-run baseline, a
 * trivial authenticated GET at the same concurrency. The histories also give where a job's time
 * goes: the median and p99 delay from its submission to each stage.
 *
 *   npx tsx bench/job-throughput.ts [nodes=10000] [jobs=2000]
 *   npm run bench -- --only job-throughput --set job-throughput.nodes=1000 --set job-throughput.jobs=500
 *
 * Knobs: job-throughput.nodes, .jobs, .connections, .timeoutSeconds (the bound on the wait for the
 * jobs to complete), .joinRate (sim joins/s).
 * Node flags for `shoal serve`, e.g. a CPU profile of the orchestrator (written when it stops):
 *   JOBS_SERVE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"; summarise it with bench/support/cpu-profile-top.ts.
 * Targets: >= 1,000 placements/s at 10,000 nodes; submission p99 <= 50 ms at 50 clients.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { COMPUTE_STATES } from "../machines/execution/execution-states.ts";
import { freePort } from "./support/free-port.ts";
import { httpLoad } from "./support/http-load.ts";
import { batchJob, getJson, listJobs, type JobRow } from "./support/job-rest.ts";
import { processCpuMs, threadCpuMs } from "./support/process-cpu.ts";
import { serveOrchestrator } from "./support/shoal-serve.ts";
import { startSimFleet, type SimFleet } from "./support/shoal-sim.ts";

const TARGET_PLACEMENTS_PER_S = 1_000;
const TARGET_SUBMIT_P99_MS = 50;
const PROGRESS_MS = 2_000;
const SIM_PREFIX = "jobbench";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

interface HistoryRow {
  readonly Type: "JobLevel" | "ExecutionLevel";
  readonly JobState?: { readonly Previous: string; readonly New: string };
  readonly ExecutionState?: { readonly Previous: number; readonly New: number };
  readonly Time: string;
}

/** A history entry's time in ms since the epoch: RFC 3339, or Unix nanoseconds as a string. */
function historyMs(time: string): number {
  return /^\d+$/.test(time) ? Number(BigInt(time) / 1_000_000n) : Date.parse(time);
}

/** The first time each stage was reached in a job's history, in ms since the epoch. */
async function stagesOf(apiUrl: string, key: string, jobId: string): Promise<Map<string, number>> {
  const stages = new Map<string, number>();
  let token = "";
  do {
    const page = await getJson<{ Items: HistoryRow[]; NextToken: string }>(
      `${apiUrl}/api/v1/orchestrator/jobs/${jobId}/history?limit=1000${token === "" ? "" : `&next_token=${token}`}`,
      key,
    );
    for (const entry of page.Items) {
      const stage =
        entry.Type === "JobLevel"
          ? `job ${entry.JobState?.New ?? "?"}`
          : `execution ${COMPUTE_STATES[entry.ExecutionState?.New ?? 0] ?? entry.ExecutionState?.New}`;
      if (!stages.has(stage)) stages.set(stage, historyMs(entry.Time));
    }
    token = page.NextToken;
  } while (token !== "");
  return stages;
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "job-throughput.nodes", options.quick ? 200 : 10_000);
  const jobs = setting(options, "job-throughput.jobs", options.quick ? 100 : 2_000);
  const connections = setting(options, "job-throughput.connections", 50);
  const timeoutSeconds = setting(options, "job-throughput.timeoutSeconds", options.quick ? 120 : 600);
  const joinRate = setting(options, "job-throughput.joinRate", 1_000);
  // 1: the store commits on its writer thread (EventStore.SQLite.WriterThread), not on the event loop.
  const writerThread = setting(options, "job-throughput.writerThread", 0) === 1;
  const natsPort = await freePort();
  const serveNodeArgs = process.env.JOBS_SERVE_NODE_ARGS?.split(" ").filter((a) => a !== "");
  const orchestrator = await serveOrchestrator(
    {
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": natsPort,
      // The fleet joins at the sim's own rate; the default admission rate would stretch its join over minutes.
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      "EventStore.SQLite.WriterThread": String(writerThread),
    },
    serveNodeArgs === undefined || serveNodeArgs.length === 0 ? {} : { nodeArgs: serveNodeArgs },
  );
  let fleet: SimFleet | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const key = orchestrator.adminKey;
    const apiUrl = orchestrator.apiUrl;
    const joinStarted = performance.now();
    options.log(`  ${nodes} sim nodes joining (load ${load()})`);
    fleet = await startSimFleet({
      nodes,
      prefix: SIM_PREFIX,
      natsUrl: `nats://127.0.0.1:${natsPort}`,
      tokenFile: join(orchestrator.dataDir, "credentials", "join-token"),
      joinRatePerSecond: joinRate,
      heartbeatMs: 5_000,
      runMs: 0,
    });
    const joinDeadline = performance.now() + Math.max(120_000, nodes * 50);
    for (let lastLog = 0; ;) {
      const broken = fleet.exited();
      if (broken) throw new Error(broken);
      const p = fleet.progress();
      if (p !== undefined && p.registered >= nodes && p.joining === 0) break;
      if (performance.now() > joinDeadline) throw new Error(`the fleet did not join in time: ${JSON.stringify(p)}`);
      if (performance.now() - lastLog > PROGRESS_MS * 5 && p) {
        lastLog = performance.now();
        options.log(`    joining: ${p.registered}/${nodes} registered, ${p.refused} refused, ${p.failed} undelivered`);
      }
      await sleep(250);
    }
    const joinSeconds = (performance.now() - joinStarted) / 1000;
    options.log(`  fleet joined in ${joinSeconds.toFixed(1)} s (load ${load()})`);

    // The baseline: the API's own rate on a trivial authenticated GET, same connections, same fleet heartbeating.
    const baseline = await httpLoad({
      url: apiUrl,
      connections,
      seconds: options.quick ? 2 : 5,
      warmupSeconds: 1,
      headers: { authorization: `Bearer ${key}` },
      request: () => ({ method: "GET", path: "/api/v1/agent/alive" }),
    });
    if (baseline.failedInAll > 0) throw new Error(`the baseline GET failed: ${baseline.firstError ?? "?"}`);
    options.log(
      `  baseline GET /api/v1/agent/alive: ${Math.round(baseline.perSecond)}/s, p99 ${baseline.p99Ms.toFixed(1)} ms`,
    );

    // Which processor falls behind the store while the jobs run, and how long the event loop stalls.
    const processorLag = new Map<string, number>();
    let lagMaxMs = 0;
    const appended: number[] = [];
    const sampleMetrics = async () => {
      for (const [sample, value] of await orchestrator.metrics()) {
        if (sample.startsWith("shoal_processor_lag_events")) {
          const processor = sample.slice(sample.indexOf("{"));
          processorLag.set(processor, Math.max(processorLag.get(processor) ?? 0, value));
        }
        if (sample === "shoal_event_loop_lag_max_seconds") lagMaxMs = Math.max(lagMaxMs, value * 1000);
        if (sample === "shoal_events_appended_total") appended.push(value);
      }
    };
    // Each scrape reads the loop's longest stall since the previous one: sampled every second, nothing is missed.
    await sampleMetrics();
    sampler = setInterval(() => void sampleMetrics().catch(() => undefined), 1_000);
    options.log(`  submitting ${jobs} batch jobs from ${connections} clients (load ${load()})`);
    let issued = 0;
    const orchestratorPid = orchestrator.process.child.pid;
    const simPid = fleet.process.child.pid;
    const cpuBefore = {
      main: threadCpuMs(orchestratorPid),
      orchestrator: processCpuMs(orchestratorPid),
      sim: processCpuMs(simPid),
    };
    const firstSubmitAt = Date.now();
    // The profile's clock (CLOCK_MONOTONIC, µs), so that a CPU profile can be cut to the job phase.
    const phaseStartUs = process.hrtime.bigint() / 1000n;
    const submitted = await httpLoad({
      url: apiUrl,
      connections,
      // A bound, not a duration: the load stops once every job is sent.
      seconds: timeoutSeconds,
      warmupSeconds: 0,
      headers: { authorization: `Bearer ${key}` },
      request: () => ({ method: "PUT", path: "/api/v1/orchestrator/jobs", body: batchJob(issued++) }),
      until: () => issued >= jobs,
      // A client pool submits over connections it holds open: how long accepting 50 new ones takes while jobs run
      // is another figure (the note), not a submission's latency.
      open: { method: "GET", path: "/api/v1/agent/alive" },
    });
    options.log(
      `    ${Math.round(submitted.perSecond)} submissions/s, p50 ${submitted.p50Ms.toFixed(1)} ms, ` +
        `p99 ${submitted.p99Ms.toFixed(1)} ms, ${submitted.failedInAll} failed ` +
        `(${connections} connections opened first, in ${(submitted.openMs ?? 0).toFixed(0)} ms)`,
    );
    if (submitted.failedInAll > 0)
      throw new Error(`${submitted.failedInAll} submissions failed; first: ${submitted.firstError ?? "?"}`);
    if (submitted.succeededInAll !== jobs)
      throw new Error(`${submitted.succeededInAll} submissions answered 200, expected ${jobs}`);

    const waitDeadline = firstSubmitAt + timeoutSeconds * 1000;
    let listed: JobRow[] = [];
    for (;;) {
      const broken = fleet.exited();
      if (broken) throw new Error(broken);
      listed = await listJobs(apiUrl, key);
      const byState = new Map<string, number>();
      for (const j of listed) byState.set(j.State.StateType, (byState.get(j.State.StateType) ?? 0) + 1);
      const failed = listed.filter((j) => j.State.StateType === "Failed" || j.State.StateType === "Stopped");
      if (failed.length > 0)
        throw new Error(
          `${failed.length} jobs ended ${failed[0]!.State.StateType}; first: ${failed[0]!.ID}: ${failed[0]!.State.Message ?? ""}`,
        );
      const completed = byState.get("Completed") ?? 0;
      options.log(
        `    ${((Date.now() - firstSubmitAt) / 1000).toFixed(1)} s: ${completed}/${jobs} Completed ` +
          `(${JSON.stringify(Object.fromEntries(byState))}; load ${load()})`,
      );
      if (listed.length === jobs && completed === jobs) break;
      if (Date.now() > waitDeadline)
        throw new Error(
          `gave up after ${timeoutSeconds} s (job-throughput.timeoutSeconds): ${completed} of ${jobs} jobs Completed`,
        );
      await sleep(PROGRESS_MS);
    }
    const phaseWallMs = Date.now() - firstSubmitAt;
    if (serveNodeArgs?.includes("--cpu-prof"))
      options.log(
        `    the job phase in a CPU profile: --from ${phaseStartUs} --to ${process.hrtime.bigint() / 1000n} ` +
          "(bench/support/cpu-profile-top.ts)",
      );
    const cpuShare = (now: number, before: number) => Math.round(((now - before) / phaseWallMs) * 100);
    const mainCpuMs = threadCpuMs(orchestratorPid) - cpuBefore.main;
    const mainCpu = cpuShare(mainCpuMs + cpuBefore.main, cpuBefore.main);
    const orchestratorCpu = cpuShare(processCpuMs(orchestratorPid), cpuBefore.orchestrator);
    const simCpu = cpuShare(processCpuMs(simPid), cpuBefore.sim);
    options.log(
      `    CPU over the job phase, % of one core: orchestrator main thread ${mainCpu}, ` +
        `orchestrator in all ${orchestratorCpu}, shoal sim ${simCpu}`,
    );
    clearInterval(sampler);
    await sampleMetrics();
    const eventsAppended = Math.max(...appended) - Math.min(...appended);
    const lastCompletedAt = Math.max(...listed.map((j) => j.ModifyTime / 1e6));
    const endToEndSeconds = (lastCompletedAt - firstSubmitAt) / 1000;
    const latencies = listed.map((j) => (j.ModifyTime - j.CreateTime) / 1e6).sort((a, b) => a - b);

    // Where the time goes: every job's history (untimed, after the run), a few at a time.
    const stages = new Map<string, number[]>();
    const reached = new Map<string, number[]>();
    const ids = listed.map((j) => j.ID);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let id = ids.pop(); id !== undefined; id = ids.pop()) {
          const times = await stagesOf(apiUrl, key, id);
          const from = Math.min(...times.values());
          for (const [stage, at] of times) {
            (stages.get(stage) ?? stages.set(stage, []).get(stage)!).push(at - from);
            (reached.get(stage) ?? reached.set(stage, []).get(stage)!).push(at);
          }
        }
      }),
    );
    const stageRows = [...stages.entries()]
      .map(([stage, delays]) => {
        const sorted = delays.sort((a, b) => a - b);
        const last = Math.max(...reached.get(stage)!);
        return {
          stage,
          jobs: sorted.length,
          p50Ms: quantile(sorted, 0.5),
          p99Ms: quantile(sorted, 0.99),
          lastAfterFirstSubmitS: (last - firstSubmitAt) / 1000,
        };
      })
      .sort((a, b) => a.p50Ms - b.p50Ms);
    for (const r of stageRows)
      options.log(
        `    ${r.stage.padEnd(32)} ${String(r.jobs).padStart(6)} jobs; after submission p50 ${r.p50Ms} ms, ` +
          `p99 ${r.p99Ms} ms; the last ${r.lastAfterFirstSubmitS.toFixed(2)} s after the first submission`,
      );
    const placed = stageRows.find((r) => r.stage === "execution New");
    if (placed === undefined || placed.jobs !== jobs)
      throw new Error(`the histories show ${placed?.jobs ?? 0} of ${jobs} jobs placed`);
    const placementsPerS = jobs / placed.lastAfterFirstSubmitS;
    const completedPerS = jobs / endToEndSeconds;

    const figures: BenchFigure[] = [
      {
        name: "jobs submitted over REST",
        value: Math.round(submitted.perSecond),
        unit: "/s",
        baseline: { name: "GET /agent/alive, same connections", value: Math.round(baseline.perSecond) },
        note: `${jobs} jobs, ${connections} clients`,
      },
      {
        name: "submission p50",
        value: Math.round(submitted.p50Ms * 10) / 10,
        unit: "ms",
        baseline: { name: "GET /agent/alive p50", value: Math.round(baseline.p50Ms * 10) / 10 },
      },
      {
        name: "submission p99",
        value: Math.round(submitted.p99Ms * 10) / 10,
        unit: "ms",
        target: { on: "value", max: TARGET_SUBMIT_P99_MS },
        note:
          `max ${submitted.maxMs.toFixed(0)} ms; GET /agent/alive p99 ${baseline.p99Ms.toFixed(1)} ms; ` +
          `over ${connections} connections opened first (in ${(submitted.openMs ?? 0).toFixed(0)} ms)`,
      },
      {
        name: "placements (first submission → last execution created)",
        value: Math.round(placementsPerS),
        unit: "/s",
        target: { on: "value", min: TARGET_PLACEMENTS_PER_S },
        note: `${nodes} sim nodes, from the jobs' histories`,
      },
      {
        name: "jobs completed end to end (first submission → last Completed)",
        value: Math.round(completedPerS),
        unit: "/s",
        baseline: { name: "submissions/s", value: Math.round(submitted.perSecond) },
        note: `${jobs} jobs in ${endToEndSeconds.toFixed(1)} s, every one Completed`,
      },
      {
        name: "a job's submission → Completed, p50",
        value: Math.round(quantile(latencies, 0.5)),
        unit: "ms",
        note: `p99 ${Math.round(quantile(latencies, 0.99))} ms, max ${Math.round(latencies[latencies.length - 1]!)} ms`,
      },
      // Where a job's time goes: each stage's delay after the job was stored, from the histories.
      ...stageRows.map((r) => ({
        name: `a job stored → ${r.stage}, p50`,
        value: r.p50Ms,
        unit: "ms",
        note: `p99 ${r.p99Ms} ms; the last job's ${r.lastAfterFirstSubmitS.toFixed(2)} s after the first submission`,
      })),
      {
        name: "events appended while the jobs ran",
        value: eventsAppended,
        unit: "events",
        note: `${(eventsAppended / jobs).toFixed(1)} per job (heartbeats write none); ${Math.round(eventsAppended / endToEndSeconds)}/s`,
      },
      {
        name: "orchestrator main thread's CPU over the job phase",
        value: mainCpu,
        unit: "% of a core",
        note: `the orchestrator in all ${orchestratorCpu} %, shoal sim ${simCpu} %; first submission → all Completed seen`,
      },
      {
        // Steadier than rates on a shared machine: the neighbours' load stretches the phase, not this.
        name: "orchestrator main thread's CPU per job",
        value: Math.round((mainCpuMs / jobs) * 100) / 100,
        unit: "ms",
        note: "its CPU over the job phase ÷ jobs (in 10 ms ticks; the phase includes the bench's polls of the job list)",
      },
      {
        name: "orchestrator event-loop lag, max over the run",
        value: Math.round(lagMaxMs),
        unit: "ms",
        note: "shoal_event_loop_lag_max_seconds, sampled at every progress line",
      },
      ...[...processorLag.entries()].map(([processor, events]) => ({
        name: `read-side lag, max over the run: ${processor}`,
        value: events,
        unit: "events",
      })),
    ];
    options.log(`  done (load ${load()})`);
    return {
      figures,
      parameters: {
        nodes,
        jobs,
        connections,
        joinSeconds: Math.round(joinSeconds * 10) / 10,
        endToEndSeconds: Math.round(endToEndSeconds * 100) / 100,
        loadAverageAtEnd: load(),
      },
    };
  } finally {
    clearInterval(sampler);
    await fleet?.process.stop(15_000);
    await orchestrator.stop();
  }
}

await runStandalone(import.meta.url, run, ["job-throughput.nodes", "job-throughput.jobs"]);
