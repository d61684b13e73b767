/**
 * Heartbeat hot-path cost against cluster size: the time per heartbeat should not grow with
 * the number of nodes, and healthy heartbeats must write nothing. Run: npm run bench
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { commandContext } from "../src/actors/command-context.ts";
import { systemClock } from "../src/actors/clock.ts";
import { HealthThresholds } from "../src/actors/health-thresholds.ts";
import { NodeManager } from "../src/actors/node-manager.ts";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import type { NodeInfo } from "../src/events/catalog/node-info.ts";

const HEARTBEATS = 1_000_000;

function info(nodeId: string): NodeInfo {
  return {
    NodeID: nodeId,
    NodeType: "Compute",
    Hostname: nodeId,
    Labels: {},
    ComputeNodeInfo: { ExecutionEngines: [], Publishers: [], StorageSources: [], MaxCapacity: {}, MaxJobRequirements: {} },
    BacalhauVersion: { GitVersion: "bench", GOOS: "linux", GOARCH: "x64" },
  };
}

async function run(nodes: number, afterOutage = false): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-"));
  const store = new SqliteEventStore(join(dir, "shoal.db"));
  const manager = new NodeManager({
    store,
    clock: systemClock,
    logger: pino({ level: "silent" }),
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 3_600_000, unknownMs: 7_200_000 }),
  });
  await manager.recover();
  const ids = Array.from({ length: nodes }, (_, i) => `node-${i}`);
  const t0 = performance.now();
  for (const id of ids) await manager.register(info(id), commandContext({ type: "node", id }));
  const registerMs = performance.now() - t0;
  // An outage of the orchestrator's own transport re-arms every node; heartbeats must cost the same after it.
  if (afterOutage) {
    manager.transportDown("bench");
    manager.transportUp();
  }
  const eventsBefore = (await store.readAll()).length;

  const start = performance.now();
  for (let i = 0; i < HEARTBEATS; i++) manager.heartbeat(ids[i % nodes] as string);
  const ms = performance.now() - start;
  const eventsAfter = (await store.readAll()).length;

  console.log(
    `${String(nodes).padStart(6)} nodes${afterOutage ? " (after a transport outage)" : ""}: ${(ms * 1e6 / HEARTBEATS).toFixed(0).padStart(5)} ns/heartbeat ` +
      `(${Math.round(HEARTBEATS / (ms / 1000)).toLocaleString("en")} /s); events written by heartbeats: ${eventsAfter - eventsBefore}; ` +
      `registration ${(registerMs / nodes).toFixed(2)} ms/node (fsynced append)`,
  );
  manager.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const n of [10, 1_000, 5_000]) await run(n);
await run(5_000, true);
