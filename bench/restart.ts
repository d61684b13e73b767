/**
 * Restart: `shoal serve` (the built CLI, its own process, embedded NATS) on a store of N nodes
 * and M events, timed from spawn to the first answer of `GET /api/v1/orchestrator/nodes?limit=1`
 * (the API is served only once the read model has caught up with the store, so that answer is
 * the correct state; the full list is then paged and checked, untimed). The same DataDir is
 * started without a node-state snapshot (a full replay) and with one, in the same run.
 *
 * The store is built directly with better-sqlite3 in the SQLite store's own schema (created by
 * opening it with SqliteEventStore first), in one transaction: per node a NodeRegistered
 * (APPROVED), a NodeCredentialBound (a well-formed user nkey: random key bytes, correct
 * checksum, so that nats-server takes it; generating real key pairs costs 7 ms each) and
 * UNHEALTHY/HEALTHY pairs up to the events per node, interleaved across nodes as a fleet's
 * health changes would be. The publisher's and the workflow's checkpoints are set at the head,
 * as a restart finds them.
 *
 * Jobs too (`restart.jobs`, 20,000 by default): each a batch job's whole life as the orchestrator
 * stores it (8 events over a job and an execution stream, made by their deciders), spread over
 * the nodes. The job read model is served from the job-views snapshot a clean stop writes, or
 * folded from the store without it; a fourth start has the node-state snapshot but not the
 * job-views one, so what the job read model's fold costs is measured on its own. Every start
 * pages the job list and checks the count.
 *
 * npm run bench -- --only restart [--set restart.nodes=100000] [--set restart.eventsPerNode=10] [--set
 * restart.jobs=20000] [--set restart.rounds=1]
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { NODE_EVENT_VERSIONS } from "../src/events/catalog/node-event-codec.ts";
import type { NodeEventType } from "../src/events/catalog/node-events.ts";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { adminApiKeyPath } from "../src/security/admin-api-key.ts";
import { nodeStateSnapshotPath } from "../src/snapshots/node-state-snapshot-file.ts";
import { jobViewsSnapshotPath } from "../src/snapshots/job-views-snapshot.ts";
import { jobFlow } from "../src/workflows/jobs/job-flow.ts";
import { forgetDeletedNodes } from "../src/workflows/forget-deleted-nodes.ts";
import { virtualNodeInfo } from "../src/sim/virtual-node-info.ts";
import { setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { startChild } from "./support/child-process.ts";
import { freePort } from "./support/free-port.ts";
import { completedJobRows } from "./support/seed-jobs.ts";
import { LinkedRows } from "./support/linked-rows.ts";
import { wellFormedUserKey } from "./support/well-formed-user-key.ts";

const SHOAL = join(import.meta.dirname, "../bin/shoal");
async function buildStore(dataDir: string, nodes: number, eventsPerNode: number, jobs: number): Promise<number> {
  const path = join(dataDir, "shoal.db");
  await new SqliteEventStore(path).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  // Through the store's writer: rows INSERTed around it would carry no link (the chain would read as broken).
  const rows = new LinkedRows(db, path);
  const start = Date.parse("2026-01-01T00:00:00Z");
  let events = 0;
  let second = 0;
  const row = (nodeId: string, revision: number, type: string, data: unknown) => {
    const time = new Date(start + second++ * 10).toISOString();
    const metadata = {
      time,
      schemaVersion: NODE_EVENT_VERSIONS[type as NodeEventType],
      actor: { type: "system", id: "node-manager" },
      correlationId: randomUUID(),
      causationId: randomUUID(),
    };
    rows.add(
      randomUUID(),
      `node-${nodeId}`,
      revision,
      type,
      JSON.stringify(data),
      JSON.stringify(metadata),
      time,
      metadata.schemaVersion,
    );
    events++;
  };
  {
    const id = (i: number) => `bench-node-${String(i).padStart(6, "0")}`;
    for (let i = 0; i < nodes; i++) {
      const info = virtualNodeInfo(id(i), i);
      row(id(i), 0, "NodeRegistered", {
        NodeID: id(i),
        NodeType: "Compute",
        Info: info,
        Membership: "APPROVED",
        Lifecycle: 1,
      });
      row(id(i), 1, "NodeCredentialBound", { NodeID: id(i), PublicKey: wellFormedUserKey(), Reinstated: false });
    }
    for (let revision = 2; revision < eventsPerNode; revision++) {
      for (let i = 0; i < nodes; i++) {
        const last = new Date(start + second * 10 - 15_000).toISOString();
        if (revision % 2 === 0)
          row(id(i), revision, "NodeBecameUnhealthy", {
            NodeID: id(i),
            LastHeartbeat: last,
            DisconnectTimeoutMs: 15_000,
          });
        else row(id(i), revision, "NodeBecameHealthy", { NodeID: id(i), Previous: "UNHEALTHY" });
      }
    }
    for (let j = 0; j < jobs; j++) {
      for (const { stream, revision, event } of completedJobRows(
        id(j % Math.max(1, nodes)),
        () => start + second++ * 10,
      )) {
        rows.add(
          event.id,
          stream,
          revision,
          event.type,
          JSON.stringify(event.data),
          JSON.stringify(event.metadata),
          event.metadata.time as string,
          (event.metadata.schemaVersion as number | undefined) ?? null,
        );
        events++;
      }
    }
  }
  rows.flush();
  // What a restart finds: the publisher and the workflows long caught up (their own catch-up,
  // 1M JetStream publishes, is another figure: bench/publish-storm.ts).
  const checkpoint = db.prepare("INSERT INTO checkpoints (name, position) VALUES (?, ?)");
  for (const name of ["nats-event-publisher", `workflow-${forgetDeletedNodes.name}`, `workflow-${jobFlow.name}`])
    checkpoint.run(name, events);
  db.close();
  return events;
}

interface Start {
  readonly ms: number;
  readonly phases: Record<string, number>;
  readonly listed: number;
  readonly stopMs: number;
  /**
   * The first node-state snapshot written, as logged: due once the views caught up when the replay folded 100,000
   * events or more (encoded while the first pages of the list are served; a stop waits for it), else the stop's own.
   */
  readonly snapshot?: Partial<Record<"encodeMs" | "encodeOwnMs" | "writeMs" | "bytes", number>> & { cause?: string };
}

/** Spawn to the first answer of the node list; then the list paged and counted, and a clean stop. */
async function startOnce(
  dataDir: string,
  expectedNodes: number,
  expectedJobs: number,
  log: (line: string) => void,
  extra: string[] = [],
): Promise<Start> {
  const port = await freePort();
  const natsPort = await freePort();
  const args = [
    "serve",
    "-c",
    `DataDir=${dataDir}`,
    "-c",
    "API.Host=127.0.0.1",
    "-c",
    `API.Port=${port}`,
    "-c",
    `Orchestrator.Port=${natsPort}`,
    "-c",
    "Orchestrator.Host=127.0.0.1",
    "-c",
    "Logging.Level=info",
    "-c",
    "Logging.Mode=json",
    // Read with fetch, which would not trust the generated CA: the figure is the orchestrator's recovery.
    "-c",
    "API.TLS.Disable=true",
    // Its nodes are the bench's own clients, which trust no CA: the same figure as before NATS spoke TLS.
    "-c",
    "Orchestrator.NATS.TLS.Disable=true",
    ...extra,
  ];
  const spawned = performance.now();
  const child = await startChild(SHOAL, args, "is running.", 600_000);
  const url = `http://127.0.0.1:${port}`;
  let ms = 0;
  try {
    const key = readFileSync(adminApiKeyPath(dataDir), "utf8").trim();
    const headers = { authorization: `Bearer ${key}` };
    for (;;) {
      const res = await fetch(`${url}/api/v1/orchestrator/nodes?limit=1`, { headers }).catch(() => undefined);
      if (res?.status === 200) {
        await res.arrayBuffer();
        ms = performance.now() - spawned;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    let listed = 0;
    let token: string | undefined;
    do {
      const res = await fetch(
        `${url}/api/v1/orchestrator/nodes?limit=10000${token ? `&next_token=${encodeURIComponent(token)}` : ""}`,
        { headers },
      );
      const page = (await res.json()) as { Nodes: { Revision?: number; Health?: string }[]; NextToken?: string };
      listed += page.Nodes.length;
      token = page.NextToken || undefined;
    } while (token);
    if (listed !== expectedNodes) throw new Error(`listed ${listed} nodes, expected ${expectedNodes}`);
    let jobsListed = 0;
    token = undefined;
    do {
      const res = await fetch(
        `${url}/api/v1/orchestrator/jobs?limit=10000${token ? `&next_token=${encodeURIComponent(token)}` : ""}`,
        { headers },
      );
      const page = (await res.json()) as { Items: { State: { StateType: string } }[]; NextToken?: string };
      jobsListed += page.Items.filter((j) => j.State.StateType === "Completed").length;
      token = page.NextToken || undefined;
    } while (token);
    if (jobsListed !== expectedJobs) throw new Error(`listed ${jobsListed} Completed jobs, expected ${expectedJobs}`);
    const phases: Record<string, number> = {};
    const lines = child
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; time: number; ms?: number; [k: string]: unknown });
    const at = (msg: string) => lines.find((l) => l.msg === msg);
    const recovered = at("recovered nodes from the event store");
    const admitted = at("NATS admits the joined nodes' keys");
    const ready = at("orchestrator ready");
    if (recovered?.ms !== undefined) phases.recoverMs = recovered.ms;
    // The process's CPU from the node read model's start to the manager's adoption (every thread), and the node events
    // it folded.
    if (typeof recovered?.cpuMs === "number") phases.recoverCpuMs = recovered.cpuMs;
    if (typeof recovered?.events === "number") phases.recoverEvents = recovered.events;
    if (recovered && admitted) phases.natsKeysMs = admitted.time - recovered.time;
    if (admitted && ready) phases.readModelAndApiMs = ready.time - admitted.time;
    // Finer: from the first log line to the snapshot read, the read model's catch-up and the index.
    const first = lines[0];
    const snapshotRead =
      at("starting from the node-state snapshot") ??
      lines.find((l) => l.msg.startsWith("no usable node-state snapshot"));
    const caughtUp = at("read model caught up; node list indexed");
    if (first && snapshotRead) phases.toSnapshotReadMs = snapshotRead.time - first.time;
    if (admitted && caughtUp) phases.readModelMs = caughtUp.time - admitted.time;
    if (typeof caughtUp?.indexMs === "number") phases.indexMs = caughtUp.indexMs;
    // The job read model: its snapshot read (or not), then its fold until it had caught up and its
    // deadlines were armed (the node list index is built meanwhile); from the NATS keys' reload,
    // so that the publisher's start and the snapshot's read count too.
    const jobsStarting = at("job read model starting");
    const jobsCaughtUp = at("jobs read model caught up; their deadlines are armed");
    if (admitted && jobsStarting) phases.toJobReadModelMs = jobsStarting.time - admitted.time;
    if (jobsStarting && jobsCaughtUp) phases.jobFoldMs = jobsCaughtUp.time - jobsStarting.time;
    if (admitted && jobsCaughtUp) phases.jobReadModelMs = jobsCaughtUp.time - admitted.time;
    log(
      `    ${Math.round(ms)} ms to the node list; ${JSON.stringify(phases)}; ${listed} nodes and ${jobsListed} jobs listed`,
    );
    const stopping = performance.now();
    await child.stop(120_000);
    const stopMs = performance.now() - stopping;
    const written = child
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{") && l.includes("node-state snapshot written"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // A write that was due (cause "due") may still be under way at the stop, which then waits for it.
    for (const w of written) log(`    node-state snapshot written (${String(w.cause ?? "?")}): ${JSON.stringify(w)}`);
    const [firstWritten] = written;
    return { ms, phases, listed, stopMs, ...(firstWritten ? { snapshot: firstWritten as Start["snapshot"] } : {}) };
  } catch (e) {
    await child.stop(5_000);
    throw e;
  }
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "restart.nodes", options.quick ? 2_000 : 100_000);
  const eventsPerNode = setting(options, "restart.eventsPerNode", 10);
  const rounds = setting(options, "restart.rounds", 1);
  const jobs = setting(options, "restart.jobs", options.quick ? 500 : 20_000);
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-restart-"));
  try {
    const built = performance.now();
    const events = await buildStore(dataDir, nodes, eventsPerNode, jobs);
    options.log(
      `  store: ${nodes} nodes, ${jobs} jobs, ${events} events, built in ${Math.round(performance.now() - built)} ms`,
    );
    const replays: Start[] = [];
    const singleThreadReplays: Start[] = [];
    const snapshots: Start[] = [];
    const withoutJobSnapshot: Start[] = [];
    const noSnapshots = () => {
      rmSync(nodeStateSnapshotPath(dataDir), { force: true });
      rmSync(jobViewsSnapshotPath(dataDir), { force: true });
    };
    // The orchestrator's own node is listed too.
    const expected = nodes + 1;
    for (let r = 0; r < rounds; r++) {
      // The replay read on the event loop alone (the path before round 7), then read ahead on the store's reader thread
      // (the default).
      noSnapshots();
      options.log("  without a snapshot (full replay), EventStore.SQLite.ReadAhead=false:");
      singleThreadReplays.push(
        await startOnce(dataDir, expected, jobs, options.log, ["-c", "EventStore.SQLite.ReadAhead=false"]),
      );
      noSnapshots();
      options.log(
        "  without a snapshot (full replay), EventStore.SQLite.ReadAhead=true (read ahead on the store's reader thread):",
      );
      replays.push(await startOnce(dataDir, expected, jobs, options.log, ["-c", "EventStore.SQLite.ReadAhead=true"]));
      options.log("  from the snapshots written on that stop:");
      snapshots.push(await startOnce(dataDir, expected, jobs, options.log));
      rmSync(jobViewsSnapshotPath(dataDir), { force: true });
      options.log(
        "  from the node-state snapshot, without the job-views snapshot (the job read model folded from the store):",
      );
      withoutJobSnapshot.push(await startOnce(dataDir, expected, jobs, options.log));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    const replayMs = median(replays.map((s) => s.ms));
    const snapshotMs = median(snapshots.map((s) => s.ms));
    const phase = (starts: Start[], name: string) => median(starts.map((s) => s.phases[name] ?? NaN));
    const rate = (starts: Start[], per: "recoverMs" | "recoverCpuMs") =>
      median(starts.map((s) => ((s.phases.recoverEvents ?? NaN) * 1000) / (s.phases[per] ?? NaN)));
    const figures: BenchFigure[] = [
      {
        name: "restart from a snapshot: spawn to a correct node list",
        value: snapshotMs,
        unit: "ms",
        baseline: { name: "full replay", value: replayMs },
        target: { on: "value", max: 5_000 },
        note: `${nodes} nodes, ${jobs} jobs, ${events} events; ${rounds} round(s)`,
      },
      {
        name: "restart without the job-views snapshot (node-state snapshot only): spawn to a correct node list",
        value: median(withoutJobSnapshot.map((s) => s.ms)),
        unit: "ms",
        baseline: { name: "from both snapshots", value: snapshotMs },
        note: `${jobs} jobs, ${jobs * 8} of the events theirs`,
      },
      {
        name: "job read model: NATS keys reloaded to jobs caught up (snapshot read, fold; the node index built meanwhile), without the job-views snapshot",
        value: phase(withoutJobSnapshot, "jobReadModelMs"),
        unit: "ms",
        baseline: { name: "from the job-views snapshot", value: phase(snapshots, "jobReadModelMs") },
      },
      {
        name: "restart, full replay: spawn to a correct node list",
        value: replayMs,
        unit: "ms",
        baseline: {
          name: "replay read on the event loop alone (ReadAhead=false)",
          value: median(singleThreadReplays.map((s) => s.ms)),
        },
      },
      {
        name: "full replay: node events folded to the head and adopted, events/s, wall",
        value: Math.round(rate(replays, "recoverMs")),
        unit: "events/s",
        baseline: { name: "ReadAhead=false", value: Math.round(rate(singleThreadReplays, "recoverMs")) },
        target: { on: "value", min: 300_000 },
      },
      {
        name: "full replay: node events folded to the head and adopted, per CPU-second (all threads)",
        value: Math.round(rate(replays, "recoverCpuMs")),
        unit: "events/s",
        baseline: { name: "ReadAhead=false", value: Math.round(rate(singleThreadReplays, "recoverCpuMs")) },
      },
      {
        name: "node recovery from a snapshot: the fold to the head and the adoption",
        value: phase(snapshots, "recoverMs"),
        unit: "ms",
        baseline: { name: "full replay", value: phase(replays, "recoverMs") },
      },
      {
        name: "NATS reload with every node's key (access.replaceAll), snapshot start",
        value: phase(snapshots, "natsKeysMs"),
        unit: "ms",
      },
      {
        name: "NATS reload with every node's key (access.replaceAll), replay start",
        value: phase(replays, "natsKeysMs"),
        unit: "ms",
      },
      {
        // Waits for the node-state snapshot due since the catch-up when it is still being written.
        name: "clean stop after a replay (waits for a snapshot write under way)",
        value: median(replays.map((s) => s.stopMs)),
        unit: "ms",
      },
      {
        name: "node-state snapshot after a replay: encoding's own time (its slices)",
        value: median(replays.map((s) => s.snapshot?.encodeOwnMs ?? NaN)),
        unit: "ms",
        baseline: {
          name: "wall time (with what the event loop ran between the slices)",
          value: median(replays.map((s) => s.snapshot?.encodeMs ?? NaN)),
        },
        note: `${median(replays.map((s) => s.snapshot?.bytes ?? NaN))} bytes; written ${replays
          .map((s) => s.snapshot?.cause ?? "?")
          .join(", ")} (due once caught up from 100,000 events folded, else on stop)`,
      },
    ];
    return { figures, parameters: { nodes, jobs, events, eventsPerNode, rounds } };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
