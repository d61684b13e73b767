import { describe, expect, it } from "vitest";
import type { ReactionEvent, StoredReactionEvent } from "../../machines/reactions/reaction-events.ts";
import { reactionEventsOf, reactionRecordOf } from "../../machines/reactions/reaction-records.ts";
import { CorruptEventError, InvalidEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { encodeNodeReactionRecordData } from "../../src/events/catalog/node-reaction-record-codec.ts";
import type { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { storedReactionRecord } from "../../src/workflows/nodes/stored-reaction-record.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { storesPerTest } from "../support/stores-per-test.ts";

/**
 * The node-reactions workflow's records (NodeLossQueued, NodeLossReleased, NodeLossWithdrawn) through
 * the event catalog, on a real SQLite file: written as the workflow writes them, read back as its
 * restart folds them.
 */
const STREAM = "workflow-node-reactions";
const T0 = Date.parse("2026-11-29T00:00:00Z");
/** The workflow's own metadata: a cause only when one queued the node. */
const metadata = (i: number) => ({
  time: new Date(T0 + i * 1000).toISOString(),
  actor: { type: "workflow", id: "node-reactions" },
  reason: "silent nodes' queue",
  schemaVersion: 1,
});

const openStore = storesPerTest("shoal-reaction-records-");

/** Appends records as they are, one per append (as the workflow does). */
async function append(store: SqliteEventStore, records: readonly { type: string; data: unknown }[]): Promise<void> {
  for (const [i, r] of records.entries())
    await store.append(STREAM, [{ id: `r${i}`, type: r.type, data: r.data, metadata: metadata(i) }], "any");
}

describe("the node-reactions records in the event catalog", () => {
  it("round trip: stored in the shape they always had, read back to the same queue events", async () => {
    const events: StoredReactionEvent[] = [
      {
        type: "NodeLossQueued",
        nodeId: "n1",
        reason: "node n1 is UNHEALTHY and holds work",
        causationId: "",
        correlationId: "",
        queuedBy: "check-n1",
      },
      { type: "NodeLossReleased", nodeId: "n2", health: "UNKNOWN", tokens: 0.375, at: T0 + 1000 },
      { type: "NodeLossWithdrawn", nodeId: "n3", standing: "HEALTHY" },
      { type: "NodeLossWithdrawn", nodeId: "n4", standing: undefined },
    ];
    const store = openStore();
    await append(
      store,
      events.map((e) => ({ type: e.type, data: encodeNodeReactionRecordData(reactionRecordOf(e)) })),
    );

    const stored = await store.readStream(STREAM);
    expect(stored.map((r) => [r.type, r.data])).toEqual([
      ["NodeLossQueued", { NodeID: "n1", Reason: "node n1 is UNHEALTHY and holds work" }],
      ["NodeLossReleased", { NodeID: "n2", Health: "UNKNOWN", Tokens: 0.375 }],
      ["NodeLossWithdrawn", { NodeID: "n3", Standing: "HEALTHY" }],
      ["NodeLossWithdrawn", { NodeID: "n4", Standing: null }],
    ]);
    const folded: ReactionEvent[] = stored.flatMap((r) => {
      const record = storedReactionRecord(r);
      return record === undefined ? [] : reactionEventsOf(record);
    });
    // A record the check queued a node with is that node's queuing: its id, no cause.
    expect(folded).toEqual([{ ...events[0], queuedBy: "r0" }, events[1], events[2], events[3]]);
  });

  it("refuses to write a malformed record, naming the field", () => {
    const bad = reactionRecordOf({
      type: "NodeLossQueued",
      nodeId: "not a node id",
      reason: "r",
      causationId: "",
      correlationId: "",
      queuedBy: "q",
    });
    expect(() => encodeNodeReactionRecordData(bad)).toThrow(InvalidEventError);
    expect(() => encodeNodeReactionRecordData(bad)).toThrow(/NodeID/);
    const nan = reactionRecordOf({ type: "NodeLossReleased", nodeId: "n1", health: "UNHEALTHY", tokens: NaN, at: 0 });
    expect(() => encodeNodeReactionRecordData(nan)).toThrow(/Tokens/);
  });

  it("a malformed stored record is corrupt: refused with its stream, revision and field named", async () => {
    const store = openStore();
    await append(store, [
      { type: "NodeLossReleased", data: { NodeID: "n1", Health: "UNHEALTHY" } },
      { type: "NodeLossWithdrawn", data: { NodeID: "n2", Standing: "BACK" } },
      { type: "NodeLossQueued", data: { NodeID: "n3", Reason: 7 } },
    ]);
    const [released, withdrawn, queued] = await store.readStream(STREAM);
    expect(() => storedReactionRecord(released!)).toThrow(CorruptEventError);
    expect(() => storedReactionRecord(released!)).toThrow(/workflow-node-reactions@0: .*\["Tokens"\]/s);
    expect(() => storedReactionRecord(withdrawn!)).toThrow(/workflow-node-reactions@1: .*\["Standing"\]/s);
    expect(() => storedReactionRecord(queued!)).toThrow(/workflow-node-reactions@2: .*\["Reason"\]/s);
  });

  it("an orchestrator does not start on a damaged queue: its recovery names the record and the field", async () => {
    const config = await ownNatsOrchestratorConfig("shoal-reaction-records-start-");
    const store = openStore(config.DataDir);
    await append(store, [
      { type: "NodeLossQueued", data: { NodeID: "n1", Reason: "node n1 is UNHEALTHY and holds work" } },
      { type: "NodeLossReleased", data: { NodeID: "n1", Health: "UNHEALTHY", Tokens: "all of them" } },
    ]);
    await store.close();
    const started = startOrchestrator(config, silentLogger);
    await expect(started).rejects.toThrow(CorruptEventError);
    await expect(started).rejects.toThrow(/workflow-node-reactions@1: .*\["Tokens"\]/s);
  }, 60_000);
});
