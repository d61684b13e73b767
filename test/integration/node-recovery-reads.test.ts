import { rmSync } from "node:fs";
import { afterAll, afterEach, expect, it, vi } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { jobViewsSnapshotPath } from "../../src/snapshots/job-views-snapshot.ts";
import { nodeStateSnapshotPath } from "../../src/snapshots/node-state-snapshot-file.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";

const running: RunningOrchestrator[] = [];
afterAll(async () => {
  for (const o of running) await o.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const operator = commandContext({ type: "operator", id: "alice" });

/**
 * A start after a crash (no snapshot of nodes or jobs) folds every node stream once: the node read model is the one
 * fold, so each stored node event is read from the store once, not once for a recovery and again for the read models.
 */
it("reads every stored node event from the store once at a start without snapshots", async () => {
  const config: ShoalConfig = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-recovery-reads-"),
    NodeID: "orch-0",
    "API.Host": "127.0.0.1",
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NodeManager.ManualApproval": true,
    // Every replay on this thread, through readAll: what is read can be counted there.
    "EventStore.SQLite.ReadAhead": false,
  };
  const first = await startOrchestrator(config, silentLogger);
  running.push(first);
  for (let i = 0; i < 12; i++)
    await first.manager.register(computeInfo(`n${i}`), commandContext({ type: "node", id: `n${i}` }));
  for (let i = 0; i < 12; i += 2) await first.manager.operatorAction("approve", `n${i}`, operator);
  await first.manager.operatorAction("delete", "n3", operator);
  await first.manager.preauthorize("pre-1", undefined, operator);
  await first.stop();
  running.pop();
  // As after a crash: nothing written at a clean stop is there.
  rmSync(nodeStateSnapshotPath(config.DataDir));
  rmSync(jobViewsSnapshotPath(config.DataDir), { force: true });

  const store = new SqliteEventStore(`${config.DataDir}/shoal.db`);
  const stored = (await store.readAll()).filter((e) => e.stream.startsWith("node-"));
  await store.close();
  const head = stored.at(-1)?.position ?? 0;
  expect(stored.length).toBeGreaterThan(15);

  const reads = new Map<number, number>();
  const readAll = SqliteEventStore.prototype.readAll;
  vi.spyOn(SqliteEventStore.prototype, "readAll").mockImplementation(async function (this: SqliteEventStore, options) {
    const events: RecordedEvent[] = await readAll.call(this, options);
    for (const e of events)
      if (e.position <= head && e.stream.startsWith("node-")) reads.set(e.position, (reads.get(e.position) ?? 0) + 1);
    return events;
  });
  const second = await startOrchestrator(config, silentLogger);
  running.push(second);
  expect(reads.size).toBe(stored.length);
  // Each once (a second fold of its own read them all twice).
  expect([...new Set(reads.values())]).toEqual([1]);
  // And what it folded is what the node manager knows: every node, the deleted one and the pre-authorised one too.
  expect(second.manager.nodeCount).toBe(new Set(stored.map((e) => e.stream)).size);
  expect(second.manager.isRegistered("n3")).toBe(false);
  expect(second.manager.isRegistered("n4")).toBe(true);
});
