/**
 * Durable appends to the SQLite store from many entities at once, as the actor host makes them:
 * N entities, each appending one event at a time with its expected revision and awaiting the
 * acknowledgement before its next (an actor's mailbox), all entities concurrently. Measured
 * three times in the same run: with group commit (appends of one turn of the event loop share
 * one fsynced commit; the default), with one commit per append (`groupCommit: false`, the store
 * before group commit), and with group commit on the writer thread (`writerThread: true`). All are
 * fsynced (synchronous=FULL), read back and counted. Each entity is a node acting on its own
 * stream (`node-<id>`, as registrations and info updates are): rows the store's actor index leaves
 * out, so this is the best case of an append's index cost (a node's events on execution streams,
 * and other actors', are indexed).
 *
 *   npx tsx bench/store-append.ts [--entities 2000] [--appends 25] [--baseline-appends 2]
 *
 * Targets: >= 50,000 events/s and >= 10x one-commit-per-append, same run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../src/events/store/event-store.ts";
import { nodeStream } from "../src/events/streams.ts";

export const APPEND_TARGET_EVENTS_PER_S = 50_000;
export const APPEND_TARGET_RATIO = 10;

let ids = 0;
/** A node's id; its stream is `node-<id>`, as Shoal names it (the actor index leaves out a node's rows there). */
const nodeId = (entity: number): string => `n-${entity}`;

function event(entity: number, n: number): NewEvent {
  const node = nodeId(entity);
  const time = new Date().toISOString();
  return {
    id: `bench-${process.pid}-${ids++}`,
    type: n === 0 ? "NodeRegistered" : "NodeBecameHealthy",
    data:
      n === 0
        ? { NodeInfo: { NodeID: node, NodeType: "Compute", Labels: { zone: "a" } }, Membership: "APPROVED" }
        : { NodeID: node, Previous: "UNKNOWN" },
    metadata: {
      time,
      actor: { type: "node", id: node },
      correlationId: `c-${ids}`,
      causationId: `c-${ids}`,
      schemaVersion: 1,
    },
  };
}

interface Measured {
  readonly eventsPerSecond: number;
  readonly eventsPerCpuSecond: number;
  readonly events: number;
  readonly commits: number;
  readonly largestBatch: number;
  /** Event-loop delay while appending, ms (max): what heartbeats and HTTP would wait. */
  readonly lagMax: number;
}

/** One commit per append; group commit on the event loop; group commit on the writer thread (the default). */
type Mode = "single" | "loop" | "thread";

async function measure(mode: Mode, entities: number, appends: number): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-append-"));
  try {
    const store = new SqliteEventStore(join(dir, "shoal.db"), {
      groupCommit: mode !== "single",
      writerThread: mode === "thread",
    });
    const entity = async (e: number): Promise<void> => {
      let expected: number | "no_stream" = "no_stream";
      for (let n = 0; n < appends; n++)
        expected = (await store.append(nodeStream(nodeId(e)), [event(e, n)], expected)).nextExpectedRevision;
    };
    // A write before the clock starts: the writer thread (and, from sources, tsx in it) starts with the first.
    await store.checkWritable();
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(Array.from({ length: entities }, (_, e) => entity(e)));
    const ms = performance.now() - start;
    // Of every thread: the writer thread's CPU is in it.
    const { user, system } = process.cpuUsage(cpu);
    lag.disable();
    const stats = store.commitStats;
    const stored = (await store.readAll()).length;
    await store.close();
    if (stored !== entities * appends || stats.events !== stored)
      throw new Error(`stored ${stored} events, expected ${entities * appends}`);
    return {
      eventsPerSecond: Math.round(stored / (ms / 1000)),
      eventsPerCpuSecond: Math.round(stored / ((user + system) / 1e6)),
      events: stored,
      commits: stats.commits,
      largestBatch: stats.largestBatchEvents,
      lagMax: Math.round(lag.max / 1e6),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(
  options: { entities?: number; appends?: number; baselineAppends?: number } = {},
): Promise<Record<string, number | string>> {
  const entities = options.entities ?? 2_000;
  const appends = options.appends ?? 25;
  // One fsync per append is slow; fewer rounds give the same rate in a bearable time.
  const baselineAppends = options.baselineAppends ?? 2;
  const single = await measure("single", entities, baselineAppends);
  const grouped = await measure("loop", entities, appends);
  const threaded = await measure("thread", entities, appends);
  return {
    entities,
    groupCommitEvents: grouped.events,
    groupCommitEventsPerSecond: grouped.eventsPerSecond,
    groupCommitEventsPerCpuSecond: grouped.eventsPerCpuSecond,
    groupCommitCommits: grouped.commits,
    groupCommitMeanBatch: Math.round(grouped.events / grouped.commits),
    groupCommitLargestBatch: grouped.largestBatch,
    groupCommitLagMaxMs: grouped.lagMax,
    writerThreadEventsPerSecond: threaded.eventsPerSecond,
    writerThreadEventsPerCpuSecond: threaded.eventsPerCpuSecond,
    writerThreadCommits: threaded.commits,
    writerThreadLagMaxMs: threaded.lagMax,
    oneCommitPerAppendEvents: single.events,
    oneCommitPerAppendEventsPerSecond: single.eventsPerSecond,
    ratio: Number((grouped.eventsPerSecond / single.eventsPerSecond).toFixed(1)),
    targetEventsPerSecond: APPEND_TARGET_EVENTS_PER_S,
    targetRatio: APPEND_TARGET_RATIO,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      entities: { type: "string", default: "2000" },
      appends: { type: "string", default: "25" },
      "baseline-appends": { type: "string", default: "2" },
    },
  });
  const figures = await run({
    entities: Number(values.entities),
    appends: Number(values.appends),
    baselineAppends: Number(values["baseline-appends"]),
  });
  const n = (key: string) => Number(figures[key]).toLocaleString("en");
  console.log(
    `store appends, ${n("entities")} entities concurrently: group commit ${n("groupCommitEventsPerSecond")} events/s ` +
      `(${n("groupCommitEventsPerCpuSecond")} per CPU-second, ${n("groupCommitCommits")} commits, mean batch ${n("groupCommitMeanBatch")}), one commit per append ${n("oneCommitPerAppendEventsPerSecond")} events/s; ` +
      `ratio ${figures.ratio}x (targets ${n("targetEventsPerSecond")}/s and ${figures.targetRatio}x); ` +
      `on the writer thread ${n("writerThreadEventsPerSecond")} events/s (${n("writerThreadEventsPerCpuSecond")} per CPU-second, ${n("writerThreadCommits")} commits); ` +
      `event-loop delay max ${n("groupCommitLagMaxMs")} ms on the event loop, ${n("writerThreadLagMaxMs")} ms with the writer thread`,
  );
  console.log(JSON.stringify(figures));
}
