/**
 * The feed: a page of 100 events through the store's filtered read (`readFiltered`, the time
 * window bounded by `timeBounds`), with 1,000,000 events stored, for 20 combinations of filters
 * and, beside them in the same run, the unfiltered page.
 *
 * The store is a cluster's two-week history (bench/support/feed-log.ts) written through the
 * store's own writer (SqliteBatchWriter.commit): 100,000 nodes, 20,000 jobs, operators alice, bob
 * and carol causing ≈ 1 % of the events, node, system and workflow actors, one node's stream of
 * 50,000 events, times skewed as a real store's are. It is built anew in a temporary directory on
 * every run (≈ 1–3 minutes at 1,000,000 events, logged as it goes) and removed after.
 *
 * Each combination reads `pages` pages of 100 at a random `after` (inside the window's positions,
 * from `timeBounds`, for a time window; anywhere in the log otherwise), in rounds that visit every
 * combination and the unfiltered page in a shuffled order, so that all meet the same load. A page
 * is timed from the call to its events' metadata parsed (the feed shows each event's actor and
 * reason). Every event returned is checked against the filter, and a page of an entity filter
 * against the entity's streams read whole and filtered in memory, untimed.
 *
 * Target: p99 ≤ 20 ms for every combination. Reported: p50 and p99 per combination and their
 * ratios to the unfiltered page's, events per page, and CPU per page.
 *
 *   npm run bench -- --only event-feed [--set event-feed.events=1000000] [--set event-feed.pages=300]
 *     [--set event-feed.seed=1]
 *   npx tsx bench/event-feed.ts [events] [pages]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { storeFilterOf } from "../src/projections/event-feed/event-feed.ts";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { matchesFilter } from "../src/events/store/event-filter.ts";
import type { EventFilter } from "../src/events/store/event-store.ts";
import { seededRandom } from "../test/support/seeded-random.ts";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { buildFeedStore, type FeedLog } from "./support/feed-log.ts";

export const PAGE_P99_TARGET_MS = 20;
const PAGE = 100;
const ROUNDS = 10;
const WARM_UP_PAGES = 5;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Every node event type: what `category=node` asks for. */
const NODE_TYPES = [
  "NodeRegistered",
  "NodeApproved",
  "NodeRejected",
  "NodeDeleted",
  "NodeInfoUpdated",
  "NodeBecameUnhealthy",
  "NodeBecameUnknown",
  "NodeBecameHealthy",
  "NodeCredentialBound",
  "NodeCredentialRevoked",
  "NodeCordoned",
  "NodeUncordoned",
  "NodeLabelsSet",
  "NodePreauthorized",
  "NodePreauthorizationRevoked",
  "NodeDrainStarted",
  "NodeDrainCompleted",
  "NodeDrainDeadlineReached",
  "NodeUndrained",
];
const JOB_AND_EXECUTION_TYPES = [
  "JobSubmitted",
  "JobQueued",
  "JobStarted",
  "JobCompleted",
  "JobFailed",
  "JobStopped",
  "ExecutionCreated",
  "ExecutionBidAsked",
  "ExecutionBidAccepted",
  "ExecutionBidDeclined",
  "ExecutionApproved",
  "ExecutionRejected",
  "ExecutionStarted",
  "ExecutionCompleted",
  "ExecutionFailed",
  "ExecutionCancelled",
];

interface Combination {
  readonly name: string;
  readonly filter: EventFilter;
}

/**
 * The filters as the feed hands them to the store: categories already their types, an entity id
 * its three streams, `workflow:jobs` also the name workflows had before (system:workflow-jobs).
 */
function combinations(log: FeedLog): Combination[] {
  const last = log.lastTime;
  const middle = log.firstTime + Math.floor((log.lastTime - log.firstTime) / 2);
  return [
    { name: "type=NodeBecameHealthy", filter: { types: ["NodeBecameHealthy"] } },
    { name: "type=NodeDeleted (rare)", filter: { types: ["NodeDeleted"] } },
    {
      name: "type=JobSubmitted,JobCompleted,JobFailed,JobStopped",
      filter: { types: ["JobSubmitted", "JobCompleted", "JobFailed", "JobStopped"] },
    },
    { name: "category=node (19 types)", filter: { types: NODE_TYPES } },
    { name: "category=job,execution (16 types)", filter: { types: JOB_AND_EXECUTION_TYPES } },
    {
      name: "default: category=node,job,execution (35 types)",
      filter: storeFilterOf({}),
    },
    { name: "category=workflow", filter: storeFilterOf({ categories: ["workflow"] }) },
    { name: "actor=operator", filter: { actors: [{ type: "operator" }] } },
    { name: "actor=operator:alice", filter: { actors: [{ type: "operator", id: "alice" }] } },
    {
      name: "actor=operator:alice,bob,carol ∧ category=node",
      filter: {
        actors: ["alice", "bob", "carol"].map((id) => ({ type: "operator", id })),
        types: NODE_TYPES,
      },
    },
    {
      name: "actor=operator:alice ∧ type=NodeBecameHealthy (none)",
      filter: { actors: [{ type: "operator", id: "alice" }], types: ["NodeBecameHealthy"] },
    },
    {
      name: "actor=node ∧ type=ExecutionFailed (rare)",
      filter: { actors: [{ type: "node" }], types: ["ExecutionFailed"] },
    },
    {
      name: "actor=workflow:jobs",
      filter: {
        actors: [
          { type: "workflow", id: "jobs" },
          { type: "system", id: "workflow-jobs" },
        ],
      },
    },
    // A node's rows on its own stream are not in the actor index: its stream is read beside the index.
    { name: "actor=node:<a node that ran a job>", filter: { actors: [{ type: "node", id: log.someJobNode }] } },
    {
      name: `actor=node:${log.longNode} (its stream's ${log.longStreamEvents.toLocaleString("en")} events are others')`,
      filter: { actors: [{ type: "node", id: log.longNode }] },
    },
    {
      name: `entity=${log.longNode} (${log.longStreamEvents.toLocaleString("en")} events) ∧ type=NodeCordoned`,
      filter: { streams: [`node-${log.longNode}`], types: ["NodeCordoned"] },
    },
    {
      name: "entity=<a job id> (node-, job-, execution- streams)",
      filter: { streams: [`node-${log.someJob}`, `job-${log.someJob}`, `execution-${log.someJob}`] },
    },
    { name: "since, until: one day mid-log", filter: { since: middle, until: middle + DAY } },
    {
      name: "type=NodeDeleted (rare) ∧ since=the last 6 hours",
      filter: { types: ["NodeDeleted"], since: last - 6 * HOUR },
    },
    {
      name: "actor=operator:bob ∧ since, until: the last 7 days",
      filter: { actors: [{ type: "operator", id: "bob" }], since: last - 7 * DAY, until: last },
    },
  ];
}

interface Samples {
  readonly ms: number[];
  cpuMicros: number;
  events: number;
  fullPages: number;
}

/** Nearest rank. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] as number;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const events = setting(options, "event-feed.events", options.quick ? 20_000 : 1_000_000);
  const pages = setting(options, "event-feed.pages", options.quick ? 30 : 300);
  const seed = setting(options, "event-feed.seed", 1);
  const { log } = options;
  const perRound = Math.max(1, Math.ceil(pages / ROUNDS));
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-feed-"));
  try {
    const file = join(dir, "shoal.db");
    log(`  writing ${events.toLocaleString("en")} events through the store's writer into ${file}`);
    const built = performance.now();
    const feedLog = await buildFeedStore(file, events, seed, log);
    const buildSeconds = (performance.now() - built) / 1000;
    const fileMb = (statSync(file).size + (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0)) / 1e6;
    log(
      `  built in ${buildSeconds.toFixed(1)} s: ${feedLog.events.toLocaleString("en")} events, ${feedLog.nodes.toLocaleString("en")} nodes, ` +
        `${feedLog.jobs.toLocaleString("en")} jobs, ${fileMb.toFixed(0)} MB; actors ${JSON.stringify(feedLog.byActorType)}, ` +
        `operators ${JSON.stringify(feedLog.byOperator)}`,
    );

    const store = new SqliteEventStore(file);
    try {
      const head = await store.headPosition();
      const cases: Combination[] = [{ name: "unfiltered", filter: {} }, ...combinations(feedLog)];
      // Where a page may start: inside the window's positions for a time window, anywhere otherwise.
      const ranges = await Promise.all(
        cases.map(async ({ filter }) => {
          if (filter.since === undefined && filter.until === undefined) return { after: 0, through: head };
          const bounds = await store.timeBounds(filter.since, filter.until);
          return { after: bounds.after, through: bounds.through ?? head };
        }),
      );
      // An entity filter is checked whole, untimed: a page is exactly its streams' matching events after `after`.
      const naive = await Promise.all(
        cases.map(async ({ filter }) => {
          if (filter.streams === undefined) return undefined;
          const all = (await Promise.all(filter.streams.map((s) => store.readStream(s)))).flat();
          return all.filter((e) => matchesFilter(e, filter)).sort((a, b) => a.position - b.position);
        }),
      );
      const random = seededRandom(seed + 1);
      const samples: Samples[] = cases.map(() => ({ ms: [], cpuMicros: 0, events: 0, fullPages: 0 }));
      const page = async (i: number, measured: boolean) => {
        const { filter } = cases[i] as Combination;
        const range = ranges[i] as { after: number; through: number };
        const after = range.after + random.int(Math.max(1, range.through - range.after));
        const cpu = process.cpuUsage();
        const started = performance.now();
        const read = await store.readFiltered(filter, { after, maxCount: PAGE });
        for (const e of read.events) if (e.metadata.actor === undefined) throw new Error(`${e.id} has no actor`);
        const ms = performance.now() - started;
        const { user, system } = process.cpuUsage(cpu);
        for (const e of read.events)
          if (e.position <= after || !matchesFilter(e, filter))
            throw new Error(`${cases[i]?.name}: position ${e.position} does not match the filter`);
        const expected = naive[i]
          ?.filter((e) => e.position > after)
          .slice(0, PAGE)
          .map((e) => e.position);
        if (expected !== undefined && JSON.stringify(expected) !== JSON.stringify(read.events.map((e) => e.position)))
          throw new Error(`${cases[i]?.name}: the page after ${after} is not the streams' matching events`);
        if (!measured) return;
        const s = samples[i] as Samples;
        s.ms.push(ms);
        s.cpuMicros += user + system;
        s.events += read.events.length;
        if (read.events.length === PAGE) s.fullPages++;
      };
      const loadBefore = loadavg()[0] as number;
      for (let i = 0; i < cases.length; i++) for (let k = 0; k < WARM_UP_PAGES; k++) await page(i, false);
      for (let round = 0; round < ROUNDS; round++) {
        const order = cases.map((_, i) => i);
        for (let i = order.length - 1; i > 0; i--) {
          const j = random.int(i + 1);
          [order[i], order[j]] = [order[j] as number, order[i] as number];
        }
        for (const i of order) for (let k = 0; k < perRound; k++) await page(i, true);
        log(`  round ${round + 1} of ${ROUNDS}: ${perRound} pages of each of ${cases.length} filters`);
      }
      const loadAfter = loadavg()[0] as number;

      const stats = samples.map((s) => {
        const sorted = [...s.ms].sort((a, b) => a - b);
        return {
          p50: percentile(sorted, 0.5),
          p99: percentile(sorted, 0.99),
          max: sorted[sorted.length - 1] as number,
          cpuMs: s.cpuMicros / 1000 / s.ms.length,
          perPage: s.events / s.ms.length,
          full: s.fullPages,
          n: s.ms.length,
        };
      });
      const base = stats[0] as (typeof stats)[number];
      const round2 = (x: number) => Number(x.toFixed(2));
      const figures: BenchFigure[] = [];
      cases.forEach((c, i) => {
        const s = stats[i] as (typeof stats)[number];
        const note =
          `${s.n} pages, ${s.perPage.toFixed(1)} events a page (${s.full} full), max ${s.max.toFixed(1)} ms, ` +
          `CPU ${s.cpuMs.toFixed(2)} ms a page`;
        const isBase = i === 0;
        figures.push({
          name: `p99 page of 100: ${c.name}`,
          value: round2(s.p99),
          unit: "ms",
          ...(isBase ? {} : { baseline: { name: "unfiltered p99", value: round2(base.p99) } }),
          target: { on: "value", max: PAGE_P99_TARGET_MS },
          note,
        });
        figures.push({
          name: `p50 page of 100: ${c.name}`,
          value: round2(s.p50),
          unit: "ms",
          ...(isBase ? {} : { baseline: { name: "unfiltered p50", value: round2(base.p50) } }),
        });
      });
      figures.push({ name: "store built through the writer", value: round2(buildSeconds), unit: "s" });
      return {
        figures,
        parameters: {
          events: feedLog.events,
          nodes: feedLog.nodes,
          jobs: feedLog.jobs,
          longStreamEvents: feedLog.longStreamEvents,
          pagesPerFilter: perRound * ROUNDS,
          pageSize: PAGE,
          seed,
          storeMb: Math.round(fileMb),
          loadAverage: `${loadBefore.toFixed(1)}–${loadAfter.toFixed(1)}`,
          actors: JSON.stringify(feedLog.byActorType),
          operators: JSON.stringify(feedLog.byOperator),
          types: JSON.stringify(feedLog.byType),
        },
      };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await runStandalone(import.meta.url, run, ["event-feed.events", "event-feed.pages"]);
