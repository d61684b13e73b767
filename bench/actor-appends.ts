/**
 * Durable appends through the actor host: the generic EntityRegistry with the node kind (the
 * node decider, codec and streams the orchestrator uses) over a real SQLite store. N entities
 * are registered, then each gets a run of commands (Approve, MarkUnhealthy, Reject,
 * MarkHealthy, … each of which writes one event) handed to its actor all at once, so its
 * mailbox holds them while every other entity's commands run concurrently. Measured three times in
 * the same run, on fresh files: with group commit (the store's default) and with one commit
 * per append (`groupCommit: false`), and group commit on the writer thread
 * (`writerThread: true`, EventStore.SQLite.WriterThread). All are fsynced, read back and counted.
 *
 *   npx tsx bench/actor-appends.ts [entities=2000] [commands per entity=24]
 *   npm run bench -- --only actor-appends --set actor-appends.entities=5000
 *
 * Knobs: actor-appends.entities, actor-appends.commands, actor-appends.baselineCommands.
 * Targets (issue 6): >= 50,000 events/s and >= 10x one-commit-per-event, same run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pino } from "pino";
import type { NodeCommand } from "../machines/node/node-commands.ts";
import { systemClock } from "../src/actors/clock.ts";
import { systemContext } from "../src/actors/command-context.ts";
import { DeadlineScheduler } from "../src/actors/deadline-scheduler.ts";
import { EntityRegistry } from "../src/actors/entity-registry.ts";
import { nodeKind } from "../src/actors/node-kind.ts";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { timeOrderedUuid } from "../src/events/store/time-ordered-uuid.ts";
import { virtualNodeInfo } from "../src/sim/virtual-node-info.ts";
import { runStandalone, setting, type BenchOptions, type BenchResult } from "./bench-result.ts";

const TARGET_EVENTS_PER_S = 50_000;
const TARGET_RATIO = 10;

/** Each writes exactly one event in the state the one before leaves (checked: events stored = events returned). */
const CYCLE: readonly NodeCommand[] = [
  { type: "Approve" },
  { type: "MarkUnhealthy", lastHeartbeat: null, disconnectTimeoutMs: 15_000 },
  { type: "Reject" },
  { type: "MarkHealthy" },
];

interface Measured {
  readonly eventsPerSecond: number;
  readonly eventsPerCpuSecond: number;
  readonly events: number;
  readonly commits: number;
  readonly largestBatch: number;
  readonly seconds: number;
  /** Event-loop delay while appending (what heartbeats and HTTP would wait), ms: p99 and max. */
  readonly lagP99: number;
  readonly lagMax: number;
}

/**
 * How the store commits: one commit per event; group commit on the event loop; group commit on the writer thread
 * (EventStore.SQLite.WriterThread, off by default).
 */
type Mode = "single" | "loop" | "thread";

async function measure(mode: Mode, entities: number, commands: number): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-actor-appends-"));
  const store = new SqliteEventStore(join(dir, "shoal.db"), {
    groupCommit: mode !== "single",
    writerThread: mode === "thread",
  });
  const registry = new EntityRegistry(
    nodeKind,
    { store, clock: systemClock, deadlines: new DeadlineScheduler(systemClock), newEventId: timeOrderedUuid },
    { idleMs: 5 * 60_000, maxResident: entities + 1, logger: pino({ level: "silent" }) },
  );
  try {
    const ids = Array.from({ length: entities }, (_, e) => `bench-node-${e}`);
    const context = systemContext("bench");
    let returned = 0;
    const entity = async (id: string, index: number): Promise<void> => {
      const registered = await registry.execute(
        id,
        { type: "Register", info: virtualNodeInfo(id, index), manualApproval: true },
        context,
      );
      returned += registered.events.length;
      // The rest go into the mailbox at once: the actor runs them one by one, other actors meanwhile.
      const results = await Promise.all(
        Array.from({ length: commands - 1 }, (_, n) => registry.execute(id, CYCLE[n % CYCLE.length]!, context)),
      );
      for (const r of results) returned += r.events.length;
    };
    // A write before the clock starts: the writer thread (and, from sources, tsx in it) starts with the first.
    await store.checkWritable();
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(ids.map(entity));
    const ms = performance.now() - start;
    // Of every thread: the writer thread's CPU is in it.
    const { user, system } = process.cpuUsage(cpu);
    lag.disable();
    const stats = store.commitStats;
    const stored = (await store.readAll()).length;
    const expected = entities * commands;
    if (stored !== expected || returned !== expected || stats.events !== expected) {
      throw new Error(
        `stored ${stored} events, actors returned ${returned}, commits held ${stats.events}; expected ${expected}`,
      );
    }
    return {
      eventsPerSecond: stored / (ms / 1000),
      eventsPerCpuSecond: stored / ((user + system) / 1e6),
      events: stored,
      commits: stats.commits,
      largestBatch: stats.largestBatchEvents,
      seconds: ms / 1000,
      lagP99: lag.percentile(99) / 1e6,
      lagMax: lag.max / 1e6,
    };
  } finally {
    registry.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const entities = setting(options, "actor-appends.entities", options.quick ? 200 : 2_000);
  const commands = setting(options, "actor-appends.commands", options.quick ? 4 : 24);
  // One fsync per event is slow: fewer commands per entity give the same rate in a bearable time.
  const baselineCommands = setting(options, "actor-appends.baselineCommands", 2);
  options.log(`  one commit per event: ${entities} entities × ${baselineCommands} commands`);
  const single = await measure("single", entities, baselineCommands);
  options.log(`    ${Math.round(single.eventsPerSecond)} events/s (${single.seconds.toFixed(1)} s)`);
  const show = (m: Measured) =>
    `    ${Math.round(m.eventsPerSecond)} events/s, ${Math.round(m.eventsPerCpuSecond)} per CPU-second, ${m.commits} commits, largest ${m.largestBatch} events; event-loop delay p99 ${m.lagP99.toFixed(0)} ms, max ${m.lagMax.toFixed(0)} ms`;
  // The default (group commit on the event loop) and the writer thread, in the same run.
  options.log(`  group commit on the event loop: ${entities} entities × ${commands} commands`);
  const grouped = await measure("loop", entities, commands);
  options.log(show(grouped));
  options.log(`  group commit on the writer thread: ${entities} entities × ${commands} commands`);
  const threaded = await measure("thread", entities, commands);
  options.log(show(threaded));
  const baseline = { name: "same through one commit per event", value: Math.round(single.eventsPerSecond) };
  return {
    parameters: { entities, commands, baselineCommands },
    figures: [
      {
        name: "durable appends through the actor host",
        value: Math.round(grouped.eventsPerSecond),
        unit: "events/s",
        target: { on: "value", min: TARGET_EVENTS_PER_S },
        note: `${grouped.events} events in ${grouped.commits} commits (mean ${Math.round(grouped.events / grouped.commits)}, largest ${grouped.largestBatch}); ${Math.round(grouped.eventsPerCpuSecond)} per CPU-second`,
      },
      {
        name: "actor-host appends over one commit per event",
        value: Math.round(grouped.eventsPerSecond),
        unit: "events/s",
        baseline,
        target: { on: "ratio", min: TARGET_RATIO },
        note: `baseline: ${single.events} events, one commit each`,
      },
      {
        name: "with EventStore.SQLite.WriterThread, over without",
        value: Math.round(threaded.eventsPerSecond),
        unit: "events/s",
        baseline: {
          name: "same, group commit on the event loop (the default)",
          value: Math.round(grouped.eventsPerSecond),
        },
        note: `per CPU-second (both threads): ${Math.round(threaded.eventsPerCpuSecond)} on the writer thread, ${Math.round(grouped.eventsPerCpuSecond)} on the event loop; event-loop delay p99/max ${threaded.lagP99.toFixed(0)}/${threaded.lagMax.toFixed(0)} ms against ${grouped.lagP99.toFixed(0)}/${grouped.lagMax.toFixed(0)} ms; ${threaded.commits} commits, largest ${threaded.largestBatch}`,
      },
    ],
  };
}

await runStandalone(import.meta.url, run, ["actor-appends.entities", "actor-appends.commands"]);
