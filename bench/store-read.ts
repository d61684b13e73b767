/**
 * Projection rebuild from the SQLite store: how fast `readAll`, paged as the subscription and
 * the recovery read it, streams a 1,000,000-event store into a consumer that looks at every
 * event's type, data and metadata. The store is built with one bulk insert (not through
 * append: that is store-append.ts's figure), with events shaped like Shoal's node events.
 *
 *   npx tsx bench/store-read.ts [--events 1000000] [--page 512]
 *
 * Target (issue 6): >= 300,000 events/s. Also printed: events per CPU-second of the reading
 * process, which other load on the machine does not lower.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";

export const READ_TARGET_EVENTS_PER_S = 300_000;

/** One event in five is a registration carrying the node's info; the rest are small transitions. */
function eventRow(i: number): [string, string, number, string, string, string, string] {
  const node = `node-${i % 100_000}`;
  const revision = Math.floor(i / 100_000);
  const time = new Date(1_767_225_600_000 + i).toISOString();
  const metadata = JSON.stringify({
    time,
    actor: { type: "node", id: node },
    correlationId: `c-${i}`,
    causationId: `c-${i}`,
    schemaVersion: 1,
  });
  const data =
    i % 5 === 0
      ? JSON.stringify({
          NodeInfo: {
            NodeID: node,
            NodeType: "Compute",
            Hostname: `${node}.example`,
            Labels: { zone: `z${i % 3}`, arch: "amd64" },
            ComputeNodeInfo: { ExecutionEngines: ["docker"], Publishers: ["local"], StorageSources: ["urls"], MaxCapacity: { CPU: 2, Memory: 4e9 }, MaxJobRequirements: { CPU: 2 } },
            BacalhauVersion: { GitVersion: "v1.6.0", GOOS: "linux", GOARCH: "amd64" },
          },
          Membership: "APPROVED",
        })
      : JSON.stringify({ NodeID: node, Previous: "HEALTHY" });
  return [`e-${i}`, node, revision, i % 5 === 0 ? "NodeRegistered" : "NodeBecameUnknown", data, metadata, time];
}

/** Fills a new store file with `count` events in one transaction (no fsync per event). */
export async function buildStore(file: string, count: number): Promise<void> {
  await new SqliteEventStore(file).close(); // creates the schema
  const db = new Database(file);
  db.pragma("synchronous = OFF");
  const insert = db.prepare("INSERT INTO events (event_id, stream, revision, type, data, metadata, time) VALUES (?, ?, ?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(...eventRow(i));
  })();
  db.close();
}

export async function run(options: { events?: number; page?: number } = {}): Promise<Record<string, number | string>> {
  const events = options.events ?? 1_000_000;
  const page = options.page ?? 512;
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-read-"));
  try {
    const file = join(dir, "shoal.db");
    const built = performance.now();
    await buildStore(file, events);
    const buildMs = performance.now() - built;

    const store = new SqliteEventStore(file);
    let read = 0;
    let registrations = 0;
    let checksum = 0;
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let after = 0; ; ) {
      const batch = await store.readAll({ after, maxCount: page });
      if (batch.length === 0) break;
      for (const e of batch) {
        // A consumer that uses the whole event, as a projection does.
        if (e.type === "NodeRegistered") registrations++;
        checksum += (e.data as { NodeID?: string; NodeInfo?: unknown }).NodeInfo ? 1 : 0;
        checksum += (e.metadata.time as string).length + e.revision;
        read++;
        after = e.position;
      }
    }
    const readMs = performance.now() - start;
    const { user, system } = process.cpuUsage(cpu);
    await store.close();
    if (read !== events) throw new Error(`read ${read} events of ${events}`);
    if (registrations !== Math.ceil(events / 5) || checksum === 0) throw new Error(`consumer saw ${registrations} registrations`);
    const rate = Math.round(read / (readMs / 1000));
    // Other processes share the 2 cores; events per second of this process's own CPU time says
    // what the reader itself can do, beside what the wall clock saw.
    const cpuRate = Math.round(read / ((user + system) / 1e6));
    return {
      events: read,
      page,
      buildSeconds: Number((buildMs / 1000).toFixed(1)),
      readSeconds: Number((readMs / 1000).toFixed(2)),
      readAllEventsPerSecond: rate,
      readAllEventsPerCpuSecond: cpuRate,
      target: READ_TARGET_EVENTS_PER_S,
      ratioToTarget: Number((rate / READ_TARGET_EVENTS_PER_S).toFixed(2)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({ options: { events: { type: "string", default: "1000000" }, page: { type: "string", default: "512" } } });
  const figures = await run({ events: Number(values.events), page: Number(values.page) });
  const n = (key: string) => Number(figures[key]).toLocaleString("en");
  console.log(`store readAll (projection rebuild): ${n("readAllEventsPerSecond")} events/s (${n("readAllEventsPerCpuSecond")} per CPU-second) over ${n("events")} events, pages of ${n("page")} (target ${n("target")}/s)`);
  console.log(JSON.stringify(figures));
}
