import { existsSync } from "node:fs";
import pino from "pino";
import { SqliteEventStore } from "../src/events/sqlite/sqlite-event-store.ts";
import { systemClock } from "../src/actors/clock.ts";
import { HealthThresholds } from "../src/actors/health-thresholds.ts";
import { NodeManager } from "../src/actors/node-manager.ts";
import { buildStore } from "./store-read.ts";

const file = "/tmp/r7/store.db";
if (!existsSync(file)) await buildStore(file, 1_000_000);
const mode = process.argv[2] ?? "ahead";
for (let r = 0; r < Number(process.argv[3] ?? 1); r++) {
  const store = new SqliteEventStore(file, mode === "ahead" ? {} : { readAheadFrom: Infinity });
  const manager = new NodeManager({ store, clock: systemClock, logger: pino({ level: "warn" }), manualApproval: false, thresholds: new HealthThresholds({ disconnectMs: 3_600_000, unknownMs: 7_200_000 }, []) });
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const t = performance.now();
  const rec = await manager.recover();
  const ms = performance.now() - t;
  const c = process.cpuUsage(cpu);
  const u = performance.eventLoopUtilization(elu);
  console.log(mode, rec.events, Math.round(ms), "ms wall", ((c.user + c.system) / 1e6).toFixed(2), "cpu s", "elu", u.utilization.toFixed(2), Math.round(rec.events / (ms / 1000)), "/s");
  manager.stop();
  await store.close();
}
