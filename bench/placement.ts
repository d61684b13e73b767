/**
 * Placement: the pure scheduler (`placeJob`, src/scheduler/) with its `CapacityLedger`, over
 * fleets of 1,000 and 10,000 compute nodes with labels, placing batch jobs with label
 * constraints one after another as the orchestrator does (each placement given the ledger the
 * last one returned). Jobs per second and the time of one placement (p50, p99).
 *
 * The fleet is a quarter busy and stays so: the ledger starts with executions spread over the
 * nodes, and once a job has been placed the oldest one still holding capacity is released
 * (`release`), so every placement sees a full ledger and nodes that are partly taken.
 *
 * Baseline, measured in the same run on the same job sequence, in alternating rounds: the least
 * a placement over N nodes must do — one pass over the fleet per replica, checking type,
 * approval, health, engine, the constraints and free capacity (a map of what is used, updated
 * in place), keeping the node with the most free CPU. The ratio is placeJob's jobs per second
 * over the baseline's: what the scheduler's verdicts for every node, Bacalhau's ranking, its
 * messages and the immutable ledger cost on top of a bare scan.
 *
 * Indexed: placeJob given the fleet as a FleetIndex view (src/scheduler/fleet/), as JobRunner gives it: the index is
 * built once, before the round (the orchestrator keeps it as nodes change), and a job with `=`/`in` constraints judges
 * only the nodes with the values it asks for. Same jobs, same fleet, in the same alternating rounds; jobs/s overall
 * and per kind of job (no constraint; narrowed by `=`/`in`; other constraints), each against the bare pass on the same
 * jobs (the time of those placements only).
 *
 * Two more figures: placing as JobRunner does: over the fleet index, its ledger kept up to date by
 * `ExecutionLedger`, fed each new execution's state and each ended one's, as the job read model
 * folds them; and over the list with the ledger rebuilt from every active execution (`ledgerOf`)
 * before each placement, which JobRunner does not do.
 *
 * npm run bench -- --only placement [--set placement.jobs1k=2000] [--set placement.jobs10k=600] [--set
 * placement.rounds=2]
 */
import { type CapacityLedger, type Allocation, ledgerOf, release } from "../src/scheduler/capacity-ledger.ts";
import { FleetIndex } from "../src/scheduler/fleet/fleet-index.ts";
import { placeJob } from "../src/scheduler/place-job.ts";
import type { CandidateNode, ConstraintRequirement, PlacementRequest } from "../src/scheduler/placement-request.ts";
import type { Resources } from "../src/scheduler/resources.ts";
import { initialExecutionState, type ExecutionState } from "../machines/execution/execution-state.ts";
import { ExecutionLedger } from "../src/workflows/jobs/execution-ledger.ts";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";

const GiB = 2 ** 30;
const ZONES = 10;
const RACKS = 50;
/**
 * Placement is serialized, so its rate is the orchestrator's ceiling: it should cost at most
 * twice the bare pass over the fleet (round 8 measured 0.04–0.23 ×), at 1,000 and 10,000 nodes,
 * with the ledger threaded and as JobRunner keeps it.
 */
const TARGET_RATIO = 0.5;
/** The target for placement over the fleet index: jobs per second, at 1,000 and 10,000 nodes. */
const INDEXED_TARGET = 1_000;
/** Busy share of the fleet's CPU, held through every round. */
const BUSY = 0.25;

/** Deterministic, so both sides of a round place the very same jobs on the very same fleet. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fleet(size: number): CandidateNode[] {
  const r = random(size);
  const nodes: CandidateNode[] = [];
  for (let i = 0; i < size; i++) {
    const big = r() < 0.2;
    nodes.push({
      id: `node-${String(i).padStart(6, "0")}`,
      type: "Compute",
      // A few nodes the gate turns away, as a real fleet has.
      membership: r() < 0.02 ? "PENDING" : "APPROVED",
      health: r() < 0.02 ? "UNHEALTHY" : "HEALTHY",
      labels: {
        zone: `z${i % ZONES}`,
        rack: `r${Math.floor(r() * RACKS)}`,
        Architecture: r() < 0.7 ? "amd64" : "arm64",
        ...(r() < 0.2 ? { spot: "true" } : {}),
        "Operating-System": "linux",
      },
      engines: ["docker"],
      capacity: { cpuMillis: big ? 32_000 : 8_000, memoryBytes: (big ? 128 : 32) * GiB, diskBytes: 500 * GiB, gpus: 0 },
    });
  }
  return nodes;
}

/**
 * 10,000 nodes alike in everything placement reads (the job bench's `shoal sim` fleet, one machine shape): every node
 * ties with every other, and equal ranks go by node id across the whole fleet.
 */
function identicalFleet(size: number): CandidateNode[] {
  return Array.from({ length: size }, (_, i) => ({
    id: `node-${String(i).padStart(6, "0")}`,
    type: "Compute" as const,
    membership: "APPROVED" as const,
    health: "HEALTHY" as const,
    labels: { sim: "true", "Operating-System": "linux" },
    engines: ["docker"],
    capacity: { cpuMillis: 8_000, memoryBytes: 32 * GiB, diskBytes: 200 * GiB, gpus: 0 },
  }));
}

/** The job bench's jobs: Count 1, tiny resources, `sim = true` (every node has it: the index cannot narrow). */
function simJobs(count: number): Job[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `j-sim-${i}`,
    kind: "other" as const,
    count: 1,
    constraints: [{ key: "sim", operator: "=", values: ["true"] }],
    resources: { cpuMillis: 10, memoryBytes: 16 * 2 ** 20, diskBytes: 0, gpus: 0 },
  }));
}

/** A few executions in flight, as the job bench's 50 clients keep: spread over the identical fleet. */
function inFlight(nodes: readonly CandidateNode[], count: number): Allocation[][] {
  const r = random(11);
  return Array.from({ length: count }, () => [
    { nodeId: nodes[Math.floor(r() * nodes.length)]!.id, resources: simJobs(1)[0]!.resources },
  ]);
}

/** What the index can do for a job: nothing to narrow; `=`/`in` on labels few nodes share; other constraints. */
type JobKind = "unconstrained" | "narrowed" | "other";
const KINDS: readonly JobKind[] = ["unconstrained", "narrowed", "other"];

interface Job {
  readonly id: string;
  readonly kind: JobKind;
  readonly count: number;
  readonly constraints: readonly ConstraintRequirement[];
  readonly resources: Resources;
}

/** Jobs as users write them: most with a constraint or two on the labels, a few with none. */
function jobs(count: number, seed: number): Job[] {
  const r = random(seed);
  const shapes: ((r: () => number) => ConstraintRequirement[])[] = [
    () => [],
    (r) => [{ key: "zone", operator: "=", values: [`z${Math.floor(r() * ZONES)}`] }],
    (r) => [
      { key: "zone", operator: "in", values: [`z${Math.floor(r() * ZONES)}`, `z${Math.floor(r() * ZONES)}`] },
      { key: "Architecture", operator: "=", values: ["amd64"] },
    ],
    () => [{ key: "spot", operator: "!", values: [] }],
    (r) => [
      { key: "rack", operator: "notin", values: [`r${Math.floor(r() * RACKS)}`] },
      { key: "Operating-System", operator: "=", values: ["linux"] },
    ],
  ];
  const kinds: readonly JobKind[] = ["unconstrained", "narrowed", "narrowed", "other", "other"];
  return Array.from({ length: count }, (_, i) => ({
    id: `j-bench-${seed}-${i}`,
    kind: kinds[i % shapes.length]!,
    count: 1 + Math.floor(r() * 3),
    constraints: shapes[i % shapes.length]!(r),
    resources: {
      cpuMillis: [250, 500, 1000][Math.floor(r() * 3)]!,
      memoryBytes: [256, 512, 1024][Math.floor(r() * 3)]! * 2 ** 20,
      diskBytes: 0,
      gpus: 0,
    },
  }));
}

/** Executions holding a quarter of the fleet's CPU, spread over the nodes, as a busy fleet's ledger. */
function busyAllocations(nodes: readonly CandidateNode[]): Allocation[][] {
  const r = random(7);
  const total = nodes.reduce((sum, n) => sum + n.capacity.cpuMillis, 0) * BUSY;
  const held: Allocation[][] = [];
  for (let cpu = 0; cpu < total; cpu += 500) {
    const node = nodes[Math.floor(r() * nodes.length)]!;
    held.push([{ nodeId: node.id, resources: { cpuMillis: 500, memoryBytes: 512 * 2 ** 20, diskBytes: 0, gpus: 0 } }]);
  }
  return held;
}

function matches(labels: Readonly<Record<string, string>>, c: ConstraintRequirement): boolean {
  const value = labels[c.key];
  switch (c.operator) {
    case "=":
    case "==":
      return value === c.values[0];
    case "!=":
      return value !== c.values[0];
    case "in":
      return value !== undefined && c.values.includes(value);
    case "notin":
      return value === undefined || !c.values.includes(value);
    case "exists":
      return value !== undefined;
    case "!":
      return value === undefined;
    default:
      throw new Error(`baseline: operator ${c.operator} not in the bench's jobs`);
  }
}

interface Side {
  readonly name: string;
  /** Places one job; returns the allocations it made (empty when it could not). Only this is timed per placement. */
  place(job: Job): Allocation[];
  release(allocations: Allocation[]): void;
}

function requestOf(job: Job, nodes: PlacementRequest["nodes"]): PlacementRequest {
  return {
    jobId: job.id,
    type: "batch",
    count: job.count,
    constraints: job.constraints,
    engine: "docker",
    resources: job.resources,
    executions: [],
    nodes,
    queue: { timeoutMs: 0, createdAtMs: 0, nowMs: 0 },
  };
}

function scheduler(nodes: readonly CandidateNode[], start: readonly Allocation[][], rebuildLedger: boolean): Side {
  let ledger: CapacityLedger = ledgerOf(start.flat());
  const active = new Set<Allocation>(start.flat());
  return {
    name: rebuildLedger ? "placeJob, ledger rebuilt per placement" : "placeJob",
    place(job) {
      const result = placeJob(requestOf(job, nodes), rebuildLedger ? ledgerOf(active) : ledger);
      const made = result.placements.map((p) => ({ nodeId: p.nodeId, resources: job.resources }));
      if (rebuildLedger) for (const a of made) active.add(a);
      else ledger = result.ledger;
      return made;
    },
    release(allocations) {
      if (rebuildLedger) for (const a of allocations) active.delete(a);
      else ledger = release(ledger, allocations);
    },
  };
}

/** placeJob over the fleet's index, the ledger threaded: the index is built here, before the round is timed. */
function indexed(nodes: readonly CandidateNode[], start: readonly Allocation[][]): Side {
  const index = new FleetIndex();
  for (const n of nodes) index.update(n.id, n);
  let ledger: CapacityLedger = ledgerOf(start.flat());
  return {
    name: "placeJob over the fleet index",
    place(job) {
      const result = placeJob(requestOf(job, index.view()), ledger);
      ledger = result.ledger;
      return result.placements.map((p) => ({ nodeId: p.nodeId, resources: job.resources }));
    },
    release(allocations) {
      ledger = release(ledger, allocations);
    },
  };
}

/** An execution's state as the read model folds it, holding this allocation (Bacalhau's units: cores, bytes). */
function stateOf(a: Allocation, id: number, computeState: ExecutionState["computeState"] = "Running"): ExecutionState {
  const r = a.resources;
  return {
    ...initialExecutionState(`e-${id}`),
    nodeId: a.nodeId,
    computeState,
    desiredState: computeState === "Completed" ? "Stopped" : "Running",
    allocatedResources: { CPU: r.cpuMillis / 1000, Memory: r.memoryBytes, Disk: r.diskBytes, GPU: r.gpus },
  };
}

/**
 * JobRunner's way: placeJob given the fleet index's view and the ExecutionLedger's current ledger; each new and each
 * ended execution fed to it as a state.
 */
function tracked(nodes: readonly CandidateNode[], start: readonly Allocation[][]): Side {
  const index = new FleetIndex();
  for (const n of nodes) index.update(n.id, n);
  let ids = 0;
  const states = new Map<Allocation, ExecutionState>();
  for (const a of start.flat()) states.set(a, stateOf(a, ids++));
  const ledger = ExecutionLedger.of(states.values());
  return {
    name: "placeJob, ledger kept by ExecutionLedger (JobRunner)",
    place(job) {
      const result = placeJob(requestOf(job, index.view()), ledger.current());
      const made = result.placements.map((p) => ({ nodeId: p.nodeId, resources: job.resources }));
      for (const a of made) {
        const state = stateOf(a, ids++, "New");
        states.set(a, state);
        ledger.update(state);
      }
      return made;
    },
    release(allocations) {
      for (const a of allocations) {
        const state = states.get(a) as ExecutionState;
        states.delete(a);
        ledger.update({ ...state, computeState: "Completed", desiredState: "Stopped" });
      }
    },
  };
}

function bareScan(nodes: readonly CandidateNode[], start: readonly Allocation[][]): Side {
  const usedCpu = new Map<string, number>();
  const usedMemory = new Map<string, number>();
  const hold = (a: Allocation, sign: number) => {
    usedCpu.set(a.nodeId, (usedCpu.get(a.nodeId) ?? 0) + sign * a.resources.cpuMillis);
    usedMemory.set(a.nodeId, (usedMemory.get(a.nodeId) ?? 0) + sign * a.resources.memoryBytes);
  };
  for (const a of start.flat()) hold(a, 1);
  return {
    name: "one pass over the fleet per replica",
    place(job) {
      const made: Allocation[] = [];
      const taken = new Set<string>();
      for (let replica = 0; replica < job.count; replica++) {
        let best: CandidateNode | undefined;
        let bestFree = -1;
        for (const n of nodes) {
          if (
            n.type !== "Compute" ||
            n.membership !== "APPROVED" ||
            n.health !== "HEALTHY" ||
            !n.engines.includes("docker") ||
            taken.has(n.id)
          )
            continue;
          if (!job.constraints.every((c) => matches(n.labels, c))) continue;
          const freeCpu = n.capacity.cpuMillis - (usedCpu.get(n.id) ?? 0);
          const freeMemory = n.capacity.memoryBytes - (usedMemory.get(n.id) ?? 0);
          if (freeCpu < job.resources.cpuMillis || freeMemory < job.resources.memoryBytes) continue;
          if (freeCpu > bestFree) {
            best = n;
            bestFree = freeCpu;
          }
        }
        if (best === undefined) break;
        taken.add(best.id);
        const a = { nodeId: best.id, resources: job.resources };
        hold(a, 1);
        made.push(a);
      }
      return made;
    },
    release(allocations) {
      for (const a of allocations) hold(a, -1);
    },
  };
}

interface Round {
  readonly seconds: number;
  readonly placed: number;
  readonly executions: number;
  readonly perPlacementMs: number[];
}

/** Places the jobs one after another; after each, the oldest holding capacity lets it go (the fleet stays as busy). */
function runRound(side: Side, work: readonly Job[], start: readonly Allocation[][]): Round {
  const window: Allocation[][] = [...start];
  let head = 0;
  const perPlacementMs: number[] = [];
  let placed = 0;
  let executions = 0;
  const began = performance.now();
  for (const job of work) {
    const t = performance.now();
    const made = side.place(job);
    perPlacementMs.push(performance.now() - t);
    if (made.length > 0) placed++;
    executions += made.length;
    window.push(made);
    side.release(window[head++]!);
  }
  return { seconds: (performance.now() - began) / 1000, placed, executions, perPlacementMs };
}

const percentile = (xs: readonly number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
};
const median = (xs: readonly number[]) => percentile(xs, 50);

export async function run(options: BenchOptions): Promise<BenchResult> {
  const rounds = setting(options, "placement.rounds", options.quick ? 1 : 2);
  const figures: BenchFigure[] = [];
  const parameters: Record<string, number> = { rounds, busyShare: BUSY };
  // A case whose job count is set to 0 is left out.
  const cases = [
    { key: "1k", label: "1,000 nodes", size: 1_000, jobs: options.quick ? 50 : 4_000 },
    // Fewer jobs on the big fleet: each placement there looks at ten times as many nodes.
    { key: "10k", label: "10,000 nodes", size: 10_000, jobs: options.quick ? 50 : 600 },
    { key: "Identical", label: "10,000 identical nodes", size: 10_000, jobs: options.quick ? 50 : 600 },
  ];
  for (const { key, label, size, jobs: defaultJobs } of cases) {
    const count = setting(options, `placement.jobs${key}`, defaultJobs);
    if (count <= 0) continue;
    const alike = key === "Identical";
    const nodes = alike ? identicalFleet(size) : fleet(size);
    const start = alike ? inFlight(nodes, 50) : busyAllocations(nodes);
    const work = alike ? simJobs(count) : jobs(count, size);
    parameters[`jobs${key}`] = count;
    parameters[`startExecutions${key}`] = start.length;
    const results: Record<"scheduler" | "indexed" | "baseline" | "rebuilt", Round[]> = {
      scheduler: [],
      indexed: [],
      baseline: [],
      rebuilt: [],
    };
    // Warm-up of each side (JIT), untimed.
    runRound(scheduler(nodes, start, false), work.slice(0, Math.min(50, count)), start);
    runRound(indexed(nodes, start), work.slice(0, Math.min(50, count)), start);
    runRound(bareScan(nodes, start), work.slice(0, Math.min(50, count)), start);
    const sides = { scheduler: () => scheduler(nodes, start, false), indexed: () => indexed(nodes, start) };
    for (let r = 0; r < rounds; r++) {
      // ABC then CBA over rounds, so drifting load hits every side alike.
      const abc = ["scheduler", "indexed", "baseline"] as const;
      const order = r % 2 === 0 ? abc : ([...abc].reverse() as (typeof abc)[number][]);
      for (const which of order) {
        const side = which === "baseline" ? bareScan(nodes, start) : sides[which]();
        const round = runRound(side, work, start);
        results[which].push(round);
        options.log(
          `  ${label}, ${side.name}: ${count} jobs in ${round.seconds.toFixed(2)} s (${round.placed} placed, ${round.executions} executions), p99 ${percentile(round.perPlacementMs, 99).toFixed(2)} ms`,
        );
      }
    }
    // The runner's way, once over every job.
    const runner = runRound(tracked(nodes, start), work, start);
    options.log(
      `  ${label}, over the fleet index, ledger kept by ExecutionLedger: ${count} jobs in ${runner.seconds.toFixed(2)} s (${runner.placed} placed), p99 ${percentile(runner.perPlacementMs, 99).toFixed(2)} ms`,
    );
    // The ledger rebuilt per placement, once: slower by the size of the ledger, not a contender.
    const rebuiltJobs = work.slice(0, Math.max(1, Math.floor(count / 4)));
    const rebuilt = runRound(scheduler(nodes, start, true), rebuiltJobs, start);
    results.rebuilt.push(rebuilt);
    options.log(
      `  ${label}, ledger rebuilt per placement: ${rebuiltJobs.length} jobs in ${rebuilt.seconds.toFixed(2)} s, p99 ${percentile(rebuilt.perPlacementMs, 99).toFixed(2)} ms`,
    );
    if (results.scheduler.some((s) => s.placed === 0))
      throw new Error(`the scheduler placed none of ${count} jobs on ${label}`);
    // The index changes how fast, never where: the same jobs placed, with as many executions.
    for (const [i, round] of results.indexed.entries()) {
      const list = results.scheduler[i] as Round;
      if (round.placed !== list.placed || round.executions !== list.executions)
        throw new Error(`over the index ${round.placed} jobs placed, over the list ${list.placed}, on ${label}`);
    }
    const rate = (rs: Round[], jobsPerRound: number) => median(rs.map((r) => jobsPerRound / r.seconds));
    const schedulerRate = rate(results.scheduler, count);
    const baselineRate = rate(results.baseline, count);
    const p99 = (rs: Round[]) => median(rs.map((r) => percentile(r.perPlacementMs, 99)));
    const p50 = (rs: Round[]) => median(rs.map((r) => percentile(r.perPlacementMs, 50)));
    const placedShare = median(results.scheduler.map((r) => r.placed / count));
    const indexedRate = rate(results.indexed, count);
    /** Jobs per second of placement time on the jobs of one kind (their placements alone), median over the rounds. */
    const kindRate = (rs: Round[], kind: JobKind) =>
      median(
        rs.map((r) => {
          let ms = 0;
          let jobsOfKind = 0;
          r.perPlacementMs.forEach((t, i) => {
            if (work[i]?.kind !== kind) return;
            ms += t;
            jobsOfKind++;
          });
          return (jobsOfKind * 1000) / ms;
        }),
      );
    const kindP50 = (rs: Round[], kind: JobKind) =>
      median(
        rs.map((r) =>
          percentile(
            r.perPlacementMs.filter((_, i) => work[i]?.kind === kind),
            50,
          ),
        ),
      );
    figures.push(
      {
        name: `placement, ${label}: jobs placed per second over the fleet index`,
        value: Math.round(indexedRate),
        unit: "jobs/s",
        baseline: { name: "one pass over the fleet per replica", value: Math.round(baselineRate) },
        target: { on: "value", min: INDEXED_TARGET },
        note: `same jobs and rounds; placeJob over the list ${Math.round(schedulerRate)} jobs/s (${(indexedRate / schedulerRate).toFixed(2)} ×); p50 ${p50(results.indexed).toFixed(3)} ms, p99 ${p99(results.indexed).toFixed(3)} ms`,
      },
      ...KINDS.filter((kind) => work.some((j) => j.kind === kind)).map((kind) => ({
        name: `placement, ${label}: ${kind} jobs per second over the fleet index`,
        value: Math.round(kindRate(results.indexed, kind)),
        unit: "jobs/s",
        baseline: { name: "bare pass, same jobs", value: Math.round(kindRate(results.baseline, kind)) },
        note: `p50 ${kindP50(results.indexed, kind).toFixed(3)} ms (over the list ${kindP50(results.scheduler, kind).toFixed(3)} ms, bare ${kindP50(results.baseline, kind).toFixed(3)} ms)`,
      })),
    );
    figures.push(
      {
        name: `placement, ${label}: jobs placed per second`,
        value: Math.round(schedulerRate),
        unit: "jobs/s",
        baseline: { name: "one pass over the fleet per replica", value: Math.round(baselineRate) },
        target: { on: "ratio", min: TARGET_RATIO },
        note: `${count} jobs × ${rounds} round(s), Count 1–3, label constraints; ${Math.round(placedShare * 100)} % placed; fleet ${BUSY * 100} % busy`,
      },
      {
        name: `placement, ${label}: p99 per placement`,
        value: p99(results.scheduler),
        unit: "ms",
        baseline: { name: "bare pass p99", value: p99(results.baseline) },
      },
      {
        name: `placement, ${label}: p50 per placement`,
        value: p50(results.scheduler),
        unit: "ms",
        baseline: { name: "bare pass p50", value: p50(results.baseline) },
      },
      {
        name: `placement, ${label}: jobs per second over the fleet index, ledger kept by ExecutionLedger (JobRunner's way)`,
        value: Math.round(count / runner.seconds),
        unit: "jobs/s",
        baseline: { name: "one pass over the fleet per replica", value: Math.round(baselineRate) },
        target: { on: "ratio", min: TARGET_RATIO },
        note: `${count} jobs, once; ${Math.round((runner.placed / count) * 100)} % placed; p99 ${percentile(runner.perPlacementMs, 99).toFixed(2)} ms`,
      },
      {
        name: `placement, ${label}: p99 over the list with the ledger rebuilt per placement`,
        value: percentile(rebuilt.perPlacementMs, 99),
        unit: "ms",
        baseline: { name: "ledger threaded", value: p99(results.scheduler) },
        note: `${rebuiltJobs.length} jobs, ${start.length} active executions`,
      },
    );
  }
  return { figures, parameters };
}

await runStandalone(import.meta.url, run, [
  "placement.jobs1k",
  "placement.jobs10k",
  "placement.rounds",
  "placement.jobsIdentical",
]);
