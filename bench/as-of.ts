/**
 * The cluster as of a moment: the node list (a page of 100) as of a past time, with 100,000 nodes and 1,000,000
 * events stored, asked cold (nothing folded yet: the whole log up to the moment folded) and then about nearby moments
 * (the kept state folded on, or not).
 *
 * The store is a cluster's two-week history (bench/support/as-of-log.ts: 100,000 nodes joining, changing health,
 * reporting info, cordoned and labelled by operators; 20,000 jobs with an execution each), every event valid for its
 * schema, written through the store's own writer. It is built anew in a temporary directory on every run and removed
 * after.
 *
 * Each question is answered as the route does it, timed from the parameter to the page rendered: as_of resolved to a
 * position through the store's time marks (asOfPosition), the node read model folded to it (ClusterAsOf's kept
 * states), the page queried and each node rendered as the API's NodeState. Per round: a cold question at a random
 * moment in the last half of the log (a fresh ClusterAsOf), then a later one by 60 s, a later one by 5,000 events,
 * and an earlier one by 5,000 events. Beside them: the same page from the folded model alone (what a live list costs),
 * a node describe by exact id (its stream alone), and the job list as of the moment, cold (no target).
 *
 * The cold question is asked twice per round: with the node-state snapshots a running orchestrator keeps along the
 * log (as many as Orchestrator.Audit.AsOf.Snapshots keeps by default, spread evenly: one every 50,000 events of
 * 1,000,000, written and kept as NodeStateSnapshotter and AsOfSeeds do; untimed), and without
 * any (a store written before they were kept), each from a fresh ClusterAsOf; the nearby questions follow on the one
 * with the snapshots, as an orchestrator answers them.
 *
 * Targets: the cold node list ≤ 2 s, a nearby later question ≤ 200 ms.
 *
 *   npm run bench -- --only as-of [--set as-of.events=1000000] [--set as-of.rounds=3] [--set as-of.seed=1]
 *   npx tsx bench/as-of.ts [events] [rounds]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { asOfPosition } from "../src/api/as-of/as-of-query.ts";
import { CONFIG_KEYS } from "../src/config/keys.ts";
import { queryNodes, type ListNodesQuery } from "../src/api/nodes/node-query.ts";
import { toNodeState } from "../src/api/nodes/node-state.ts";
import { queryJobs, type ListJobsQuery } from "../src/api/jobs/job-query.ts";
import { jobJson } from "../src/api/jobs/job-json.ts";
import { systemClock } from "../src/actors/clock.ts";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { ClusterAsOf } from "../src/projections/as-of/cluster-as-of.ts";
import { EventEnvelope } from "../src/projections/event-envelope.ts";
import { NodeViews } from "../src/projections/node-views.ts";
import { writeFileAtomicAsync } from "../src/fs/write-file-atomic.ts";
import { AsOfSeeds } from "../src/snapshots/as-of-seeds.ts";
import { encodeNodeStateSnapshot } from "../src/snapshots/node-state-snapshot-file.ts";
import { seededRandom } from "../test/support/seeded-random.ts";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { buildAsOfStore } from "./support/as-of-log.ts";

export const COLD_TARGET_MS = 2_000;
export const NEARBY_TARGET_MS = 200;
const PAGE = { limit: 100 } as unknown as ListNodesQuery;
/** Node-state snapshots an orchestrator keeps along the log by default. */
const KEPT = CONFIG_KEYS["Orchestrator.Audit.AsOf.Snapshots"].default;

/**
 * The node-state snapshots a running orchestrator would have kept along this log: it writes one every minute or
 * 100,000 events and keeps KEPT of them spread over the log, so here one every `every` events (the log ÷ KEPT),
 * written as its snapshotter writes them and kept as it keeps them; untimed.
 */
async function keepSnapshots(
  store: SqliteEventStore,
  dir: string,
  every: number,
  log: (line: string) => void,
): Promise<AsOfSeeds> {
  const seeds = new AsOfSeeds(AsOfSeeds.dirOf(dir), KEPT, pino({ level: "silent" }));
  const views = new NodeViews();
  const live = join(dir, "node-states.msgpack");
  let next = every;
  for await (const page of store.readAllPages({ pageSize: 2_048 })) {
    for (const recorded of page) {
      views.handleEnvelope(new EventEnvelope(recorded));
      if (recorded.position < next) continue;
      const { stream, revision, id, position } = recorded;
      const encoded = await encodeNodeStateSnapshot(
        { position, anchor: { stream, revision, id }, views: views.all() },
        new Date().toISOString(),
      );
      await writeFileAtomicAsync(live, encoded.chunks);
      await seeds.keep(live, position);
      log(`  node-state snapshot kept at ${position} (${(encoded.bytes / 1e6).toFixed(1)} MB)`);
      next += every;
    }
  }
  return seeds;
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const events = setting(options, "as-of.events", options.quick ? 50_000 : 1_000_000);
  const rounds = setting(options, "as-of.rounds", options.quick ? 1 : 3);
  const seed = setting(options, "as-of.seed", 1);
  const dir = mkdtempSync(join(tmpdir(), "shoal-as-of-"));
  try {
    const file = join(dir, "shoal.db");
    const building = performance.now();
    const log = await buildAsOfStore(file, events, seed, options.log);
    const buildSeconds = (performance.now() - building) / 1000;
    options.log(
      `  as-of log: ${log.events} events, ${log.nodes} nodes, ${log.jobs} jobs (${buildSeconds.toFixed(1)} s)`,
    );
    // At most 100,000 apart, as the snapshotter writes one at least that often.
    const snapshotEvery = Math.min(100_000, Math.ceil(log.events / KEPT));
    const store = new SqliteEventStore(file);
    const logger = pino({ level: "silent" });
    const random = seededRandom(seed);
    const loadBefore = loadavg()[0] as number;
    const samples: Record<string, number[]> = {
      seeded: [],
      cold: [],
      later60s: [],
      later5k: [],
      earlier5k: [],
      page: [],
      describe: [],
      jobsCold: [],
    };
    const nodesListed: number[] = [];
    try {
      const head = await store.headPosition();
      const seeds = await keepSnapshots(store, dir, snapshotEvery, options.log);
      for (let round = 0; round < rounds; round++) {
        const moment = log.firstTime + Math.floor((0.5 + random.next() * 0.45) * (log.lastTime - log.firstTime));
        const list = async (asOf: ClusterAsOf, query: { as_of?: string; at_position?: number }) => {
          const started = performance.now();
          const position = (await asOfPosition(asOf, query)) as number;
          const page = await asOf.nodes.read(position, (model) =>
            queryNodes(model.index, PAGE, (view) => toNodeState(view, undefined)),
          );
          const ms = performance.now() - started;
          nodesListed.push(page.Nodes.length);
          return { ms, position };
        };
        // The baseline: no snapshot kept (a store written before they were), from a fresh ClusterAsOf.
        const plain = new ClusterAsOf({ store, clock: systemClock, logger });
        const cold = await list(plain, { as_of: new Date(moment).toISOString() });
        samples.cold!.push(cold.ms);
        // As an orchestrator answers: the snapshots kept along the log, and the states it keeps between questions.
        const asOf = new ClusterAsOf({
          store,
          clock: systemClock,
          logger,
          nodeSeed: (position) => seeds.load(position, store),
        });
        samples.seeded!.push((await list(asOf, { as_of: new Date(moment).toISOString() })).ms);
        samples.later60s!.push((await list(asOf, { as_of: new Date(moment + 60_000).toISOString() })).ms);
        const later = Math.min(head, cold.position + 5_000);
        samples.later5k!.push((await list(asOf, { at_position: later })).ms);
        // The page alone, from the model already folded: what the live list costs.
        const paging = performance.now();
        await asOf.nodes.read(later, (model) => queryNodes(model.index, PAGE, (view) => toNodeState(view, undefined)));
        samples.page!.push(performance.now() - paging);
        const describing = performance.now();
        const one = `n-${String(random.int(log.nodes / 2)).padStart(6, "0")}`;
        await asOf.node(one, cold.position);
        samples.describe!.push(performance.now() - describing);
        samples.earlier5k!.push((await list(asOf, { at_position: Math.max(0, cold.position - 5_000) })).ms);
        const jobsStarted = performance.now();
        await asOf.jobs.read(cold.position, (model) =>
          queryJobs(model.views, { limit: 100 } as unknown as ListJobsQuery).Items.map(jobJson),
        );
        samples.jobsCold!.push(performance.now() - jobsStarted);
        options.log(
          `  round ${round + 1}: as of position ${cold.position} of ${head}: from a kept snapshot ` +
            `${samples.seeded!.at(-1)!.toFixed(0)} ms, from the start ${cold.ms.toFixed(0)} ms, ` +
            `+60 s ${samples.later60s!.at(-1)!.toFixed(0)} ms, +5,000 ${samples.later5k!.at(-1)!.toFixed(0)} ms, ` +
            `−5,000 ${samples.earlier5k!.at(-1)!.toFixed(0)} ms, jobs cold ${samples.jobsCold!.at(-1)!.toFixed(0)} ms`,
        );
      }
    } finally {
      await store.close();
    }
    const loadAfter = loadavg()[0] as number;
    const stat = (name: string) => {
      const sorted = [...(samples[name] as number[])].sort((a, b) => a - b);
      return { p50: percentile(sorted, 0.5), max: sorted[sorted.length - 1] as number, n: sorted.length };
    };
    const round1 = (x: number) => Number(x.toFixed(1));
    const figure = (name: string, key: string, target?: number, note?: string): BenchFigure => {
      const s = stat(key);
      return {
        name,
        value: round1(s.max),
        unit: "ms",
        ...(target === undefined ? {} : { target: { on: "value" as const, max: target } }),
        note: `worst of ${s.n}; p50 ${s.p50.toFixed(1)} ms${note === undefined ? "" : `; ${note}`}`,
      };
    };
    return {
      figures: [
        figure(
          "node list as of a moment, cold, snapshots kept along the log",
          "seeded",
          COLD_TARGET_MS,
          `from the nearest of the ${KEPT} node-state snapshots kept along the log`,
        ),
        figure("node list as of a moment, cold, from the start", "cold", COLD_TARGET_MS, "no snapshot kept"),
        figure("node list as of 60 s later", "later60s", NEARBY_TARGET_MS),
        figure("node list as of 5,000 events later", "later5k", NEARBY_TARGET_MS),
        figure(
          "node list as of 5,000 events earlier",
          "earlier5k",
          undefined,
          "no kept state before it: from the nearest snapshot",
        ),
        figure("node list page from the folded model", "page"),
        figure("node describe as of a moment (its stream)", "describe"),
        figure("job list as of a moment, cold", "jobsCold"),
        { name: "store built through the writer", value: round1(buildSeconds), unit: "s" },
      ],
      parameters: {
        events: log.events,
        nodes: log.nodes,
        jobs: log.jobs,
        rounds,
        seed,
        nodesPerPage: Math.min(...nodesListed),
        snapshotEvery,
        loadAverage: `${loadBefore.toFixed(1)}–${loadAfter.toFixed(1)}`,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await runStandalone(import.meta.url, run, ["as-of.events", "as-of.rounds"]);
