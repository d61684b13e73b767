import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { systemContext } from "../../src/actors/command-context.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { CorruptEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { decodeNodeEvent, encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import { SqliteEventStore, type SqliteEventStoreOptions } from "../../src/events/sqlite/sqlite-event-store.ts";
import { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { NodeViews } from "../../src/projections/node-views.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { recoverNodes } from "../support/recover-nodes.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

const metadata = (i: number) => ({
  time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  actor: { type: "system" as const, id: "t" },
  correlationId: `c${i}`,
  causationId: `c${i}`,
});

/** Node a: registered, unknown, healthy again (revision 2), approved; node b: registered. */
async function store(options: SqliteEventStoreOptions = {}): Promise<{ file: string; store: SqliteEventStore }> {
  const file = join(tempDir(), "shoal.db");
  const s = new SqliteEventStore(file, options);
  opened.push(s);
  const events: [string, NodeEvent][] = [
    [
      "a",
      {
        type: "NodeRegistered",
        data: { NodeID: "a", NodeType: "Compute", Info: computeInfo("a"), Membership: "PENDING", Lifecycle: 1 },
      },
    ],
    [
      "b",
      {
        type: "NodeRegistered",
        data: { NodeID: "b", NodeType: "Compute", Info: computeInfo("b"), Membership: "APPROVED", Lifecycle: 1 },
      },
    ],
    ["a", { type: "NodeBecameUnknown", data: { NodeID: "a", LastHeartbeat: null, UnknownTimeoutMs: 5000 } }],
    ["a", { type: "NodeBecameHealthy", data: { NodeID: "a", Previous: "UNKNOWN" } }],
  ];
  const revisions = new Map<string, number>();
  for (const [i, [id, event]] of events.entries()) {
    const revision = revisions.get(id) ?? -1;
    await s.append(
      `node-${id}`,
      [encodeNodeEvent(event, metadata(i), `e${i}`)],
      revision === -1 ? "no_stream" : revision,
    );
    revisions.set(id, revision + 1);
  }
  return { file, store: s };
}

function damage(file: string, stream: string, revision: number, data: string): void {
  const db = new Database(file);
  db.prepare("UPDATE events SET data = ? WHERE stream = ? AND revision = ?").run(data, stream, revision);
  db.close();
}

function manager(s: SqliteEventStore): NodeManager {
  const m = new NodeManager({
    store: s,
    clock: new ManualClock(),
    logger: silentLogger,
    manualApproval: true,
    thresholds: new HealthThresholds({ disconnectMs: 60_000, unknownMs: 300_000 }, []),
  });
  opened.push({ close: () => m.stop() });
  return m;
}

async function viewsOf(s: SqliteEventStore) {
  const views = new NodeViews();
  views.hold();
  for (const e of await s.readAll()) views.handleEnvelope(new EventEnvelope(e));
  await views.release();
  return views.all().sort((x, y) => (x.nodeId < y.nodeId ? -1 : 1));
}

// Recovery's replay read on this thread, and read ahead on the store's reader thread (as a long replay is): the same
// answers.
for (const [mode, options] of [
  ["read on this thread", { readAheadFrom: Number.POSITIVE_INFINITY }],
  ["read ahead on the reader thread", { readAheadFrom: 0 }],
] as const)
  describe(`a rebuild does not decode data its fold does not read, and names a corrupt event wherever its data is read (${mode})`, () => {
    for (const [what, text, message] of [
      ["a text that is not JSON", '{"NodeID": "a", Previ', /^stream node-a@2 \(position 4\): its data is not JSON: /],
      ["data its schema refuses", '{"NodeID":"a","Previous":"ON FIRE"}', /^stream node-a@2: /],
    ] as const) {
      it(`NodeBecameHealthy with ${what}: recovery and the views fold it as any NodeBecameHealthy; its reader and the node's actor get a CorruptEventError naming it`, async () => {
        const { file, store: s } = await store(options);
        const before = await recoverNodes(manager(s), s);
        const viewsBefore = await viewsOf(s);
        damage(file, "node-a", 2, text);

        const after = await recoverNodes(manager(s), s);
        expect(after.views.all()).toEqual(before.views.all());
        expect(await viewsOf(s)).toEqual(viewsBefore);

        const damaged = (await s.readAll()).find((e) => e.stream === "node-a" && e.revision === 2)!;
        expect(() => new EventEnvelope(damaged).event?.data).toThrow(CorruptEventError);
        expect(() => new EventEnvelope(damaged).event?.data).toThrow(message);
        expect(() => decodeNodeEvent(damaged)).toThrow(message);
        // The node's actor loads its whole stream, every event checked: the command fails, naming the event, and stores
        // nothing.
        const m = manager(s);
        await recoverNodes(m, s);
        await expect(m.operatorAction("approve", "a", systemContext("test"))).rejects.toThrow(message);
        expect((await s.readStream("node-a")).length).toBe(3);
      });
    }

    it("NodeBecameUnknown (its fold reads LastHeartbeat) with data that is not JSON, or that its schema refuses: recovery and the views stop, naming it", async () => {
      for (const [text, message] of [
        ['{"NodeID": "a", Last', /^stream node-a@1 \(position 3\): its data is not JSON: /],
        ['{"NodeID":"a","LastHeartbeat":7,"UnknownTimeoutMs":5000}', /^stream node-a@1: /],
      ] as const) {
        const { file, store: s } = await store(options);
        damage(file, "node-a", 1, text);
        await expect(recoverNodes(manager(s), s)).rejects.toThrow(CorruptEventError);
        await expect(recoverNodes(manager(s), s)).rejects.toThrow(message);
        await expect(viewsOf(s)).rejects.toThrow(message);
      }
    });
  });
