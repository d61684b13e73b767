/**
 * Operator PUTs over REST: a real `shoal serve` (the compiled CLI, its own process, its own
 * nats-server and SQLite store) with N registered PENDING compute nodes, and 50 keep-alive
 * connections doing `PUT /api/v1/orchestrator/nodes/<id>` with the admin key. Each node gets
 * approve, reject, approve, … in turn, so every PUT writes one event (NodeApproved or
 * NodeRejected: the seeded nodes hold no key, so no credential changes and no nats-server
 * reloads). Each connection owns its own share of the nodes and visits them round-robin, so a
 * node's PUTs never overlap and arrive in the order sent.
 *
 * The nodes are seeded into the store before `shoal serve` starts, through the actor host and
 * node decider the orchestrator uses (test/support/seed-nodes.ts): 10,000 joins over the
 * protocol would take ≈ 13 minutes here (every join reloads nats-server). The orchestrator
 * recovers them on start, as after a restart.
 *
 * Figures: PUTs/s in the measured window, p50/p99 (request sent → answer read), and the events
 * written, counted from the store after the orchestrator stopped: they must equal the PUTs
 * answered 200 (warm-up included).
 *
 *   npx tsx bench/operator-puts.ts [nodes=10000] [seconds=15]
 *   npm run bench -- --only operator-puts --set operator-puts.nodes=100000
 *
 * Knobs: operator-puts.nodes, operator-puts.seconds, operator-puts.connections.
 * Targets (issue 6): >= 3,000 PUTs/s, p99 <= 50 ms.
 */
import { join } from "node:path";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { runStandalone, setting, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { httpLoad } from "./support/http-load.ts";
import { seedNodes } from "../test/support/seed-nodes.ts";
import { serveOrchestrator } from "./support/shoal-serve.ts";

const TARGET_PER_S = 3_000;
const TARGET_P99_MS = 50;
const OPERATOR_EVENTS = new Set(["NodeApproved", "NodeRejected"]);

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "operator-puts.nodes", options.quick ? 500 : 10_000);
  const seconds = setting(options, "operator-puts.seconds", options.quick ? 2 : 15);
  const connections = setting(options, "operator-puts.connections", 50);
  const warmupSeconds = options.quick ? 1 : 3;
  const ids = Array.from({ length: nodes }, (_, i) => `put-${String(i).padStart(6, "0")}`);
  if (nodes < connections)
    throw new Error(
      `operator-puts.nodes (${nodes}) must be at least the connections (${connections}): one node is never PUT twice at once`,
    );

  let seededEvents = 0;
  let seedSeconds = 0;
  const orchestrator = await serveOrchestrator(
    {
      "Orchestrator.NodeManager.ManualApproval": "true",
      // The seeded nodes never heartbeat: none may turn UNHEALTHY (a write of its own) during the run.
      "Orchestrator.NodeManager.DisconnectTimeout": "1h",
      "Orchestrator.NodeManager.UnknownTimeout": "2h",
    },
    {
      prepare: async (dataDir) => {
        const t0 = performance.now();
        seededEvents = await seedNodes(
          dataDir,
          ids.map((nodeId, index) => ({ nodeId, index })),
          true,
        );
        seedSeconds = (performance.now() - t0) / 1000;
        options.log(`  seeded ${nodes} PENDING nodes (${seededEvents} events) in ${seedSeconds.toFixed(1)} s`);
      },
      readyTimeoutMs: 180_000,
    },
  );
  let stopped = false;
  try {
    const before = await orchestrator.metrics();
    options.log(`  ${connections} connections, PUT approve/reject for ${warmupSeconds} s warm-up + ${seconds} s`);
    const load = await httpLoad({
      url: orchestrator.apiUrl,
      connections,
      seconds,
      warmupSeconds,
      headers: { authorization: `Bearer ${orchestrator.adminKey}` },
      request: (_, worker, n) => {
        // Connection w owns nodes w, w + connections, …: a node's PUTs are sent one after another.
        const owned = Math.floor((nodes - 1 - worker) / connections) + 1;
        const nodeId = ids[worker + connections * (n % owned)]!;
        // The node's k-th PUT: approve when k is even (it starts PENDING), reject when odd.
        const action = Math.floor(n / owned) % 2 === 0 ? "approve" : "reject";
        return {
          method: "PUT",
          path: `/api/v1/orchestrator/nodes/${nodeId}`,
          body: JSON.stringify({ NodeID: nodeId, Action: action, Message: "bench" }),
        };
      },
    });
    const after = await orchestrator.metrics();
    const lag = after.get("shoal_event_loop_lag_max_seconds");
    const lagP99 = after.get("shoal_event_loop_lag_p99_seconds");
    options.log(
      `    ${Math.round(load.perSecond)} PUTs/s, p50 ${load.p50Ms.toFixed(1)} ms, p99 ${load.p99Ms.toFixed(1)} ms, ${load.failedInAll} failed${load.firstError ? ` (${load.firstError})` : ""}`,
    );

    await orchestrator.process.stop();
    stopped = true;
    const store = new SqliteEventStore(join(orchestrator.dataDir, "shoal.db"));
    let written = 0;
    try {
      for (const e of await store.readAll()) if (OPERATOR_EVENTS.has(e.type)) written++;
    } finally {
      await store.close();
    }
    options.log(
      `    events written by the PUTs (from the store): ${written}, PUTs answered 200: ${load.succeededInAll}`,
    );
    if (written !== load.succeededInAll)
      throw new Error(
        `the store holds ${written} NodeApproved/NodeRejected events, but ${load.succeededInAll} PUTs were answered 200`,
      );
    if (load.failedInAll > 0) throw new Error(`${load.failedInAll} PUTs failed; first: ${load.firstError ?? "?"}`);
    const appended =
      (after.get("shoal_events_appended_total") ?? Number.NaN) -
      (before.get("shoal_events_appended_total") ?? Number.NaN);

    return {
      parameters: {
        nodes,
        seconds,
        warmupSeconds,
        connections,
        seededEvents,
        seedSeconds: Math.round(seedSeconds * 10) / 10,
      },
      figures: [
        {
          name: "operator PUTs over REST",
          value: Math.round(load.perSecond),
          unit: "/s",
          target: { on: "value", min: TARGET_PER_S },
          note: `${load.completed} in ${seconds} s, ${nodes} nodes, ${connections} connections`,
        },
        {
          name: "operator PUT p99",
          value: Math.round(load.p99Ms * 10) / 10,
          unit: "ms",
          target: { on: "value", max: TARGET_P99_MS },
          note: `p50 ${load.p50Ms.toFixed(1)} ms, max ${load.maxMs.toFixed(0)} ms`,
        },
        {
          name: "events written by the PUTs (store)",
          value: written,
          unit: "events",
          note: `= PUTs answered 200 (warm-up included); shoal_events_appended_total moved ${appended}`,
        },
        {
          name: "orchestrator event-loop lag, max",
          value: lag === undefined ? Number.NaN : Math.round(lag * 1000),
          unit: "ms",
          note: `shoal_event_loop_lag_max_seconds over the load (p99 ${lagP99 === undefined ? "?" : Math.round(lagP99 * 1000)} ms)`,
        },
      ],
    };
  } finally {
    if (!stopped) await orchestrator.process.stop();
    await orchestrator.stop();
  }
}

await runStandalone(import.meta.url, run, ["operator-puts.nodes", "operator-puts.seconds"]);
