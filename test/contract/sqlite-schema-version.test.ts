import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { CorruptEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { decodeNodeEvent, encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { schemaVersionColumn } from "../../src/events/sqlite/sqlite-recorded-event.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { recoverNodes } from "../support/recover-nodes.ts";

/** The events table as every Shoal before the schema_version column created it. */
const OLD_SCHEMA = `
CREATE TABLE events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  stream   TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type     TEXT NOT NULL,
  data     TEXT NOT NULL,
  metadata TEXT NOT NULL,
  time     TEXT NOT NULL,
  UNIQUE (stream, revision)
);
CREATE TABLE checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
`;
/** How an older Shoal appends: it names its columns, so the new one is left empty. */
const OLD_INSERT =
  "INSERT INTO events (event_id, stream, revision, type, data, metadata, time) VALUES (?, ?, ?, ?, ?, ?, ?)";

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

function open(file: string): SqliteEventStore {
  const store = new SqliteEventStore(file);
  opened.push(store);
  return store;
}

const metadata = (i: number) => ({
  time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  actor: { type: "node" as const, id: "n" },
  correlationId: `c${i}`,
  causationId: `c${i}`,
});

/** A short history of two nodes, as the decider writes it. */
function history(): [stream: string, NewEvent][] {
  const events: [string, NodeEvent][] = [];
  for (const id of ["a", "b"]) {
    events.push([
      id,
      {
        type: "NodeRegistered",
        data: {
          NodeID: id,
          NodeType: "Compute",
          Info: computeInfo(id, { zone: id }),
          Membership: "APPROVED",
          Lifecycle: 1,
        },
      },
    ]);
    events.push([
      id,
      {
        type: "NodeBecameUnknown",
        data: { NodeID: id, LastHeartbeat: "2026-01-01T00:00:00.000Z", UnknownTimeoutMs: 5000 },
      },
    ]);
  }
  events.push([
    "a",
    {
      type: "NodeCredentialBound",
      data: { NodeID: "a", PublicKey: "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Reinstated: false },
    },
  ]);
  events.push([
    "b",
    { type: "NodeInfoUpdated", data: { NodeID: "b", Info: computeInfo("b", { zone: "c" }), Changed: ["Labels"] } },
  ]);
  return events.map(([id, e], i) => [`node-${id}`, encodeNodeEvent(e, metadata(i), `e${i}`)]);
}

/** A store file made the way an older Shoal made it, holding `events`. */
function oldStore(file: string, events: [string, NewEvent][]): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(OLD_SCHEMA);
  const insert = db.prepare(OLD_INSERT);
  const revisions = new Map<string, number>();
  for (const [stream, e] of events) {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    insert.run(e.id, stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), e.metadata.time);
  }
  db.close();
}

async function appendAll(store: SqliteEventStore, events: [string, NewEvent][]): Promise<void> {
  for (const [stream, e] of events) await store.append(stream, [e], "any");
}

async function recover(store: SqliteEventStore) {
  const manager = new NodeManager({
    store,
    clock: new ManualClock(),
    logger: silentLogger,
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 60_000, unknownMs: 300_000 }, []),
  });
  opened.push({ close: () => manager.stop() });
  const { views, events } = await recoverNodes(manager, store);
  return { views: views.all().sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1)), events };
}

const columnOf = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT schema_version FROM events ORDER BY position").pluck().all();
  } finally {
    db.close();
  }
};

describe("SQLite store: the schema_version column", () => {
  it("is added to a store an older Shoal made, which then reads, folds and appends as before", async () => {
    const events = history();
    const oldFile = join(tempDir(), "shoal.db");
    oldStore(oldFile, events.slice(0, 4));
    const store = open(oldFile);
    const read = await store.readAll();
    expect(read.map((e) => [e.stream, e.revision, e.type])).toEqual(
      events.slice(0, 4).map(([s, e], i) => [s, i % 2, e.type]),
    );
    // Events stored before the column: no copy of the version, so readers take the metadata's.
    expect(read.map((e) => e.schemaVersion)).toEqual([undefined, undefined, undefined, undefined]);
    expect(read.map((e) => e.metadata)).toEqual(events.slice(0, 4).map(([, e]) => e.metadata));
    expect(read.map((e) => decodeNodeEvent(e).type)).toEqual([
      "NodeRegistered",
      "NodeBecameUnknown",
      "NodeRegistered",
      "NodeBecameUnknown",
    ]);
    await appendAll(store, events.slice(4));
    expect(columnOf(oldFile)).toEqual([null, null, null, null, 1, 1]);
    await store.close();

    // Opened again (the column is there now, nothing changes), and written by an older Shoal again.
    const again = open(oldFile);
    const db = new Database(oldFile);
    db.prepare(OLD_INSERT).run(
      "e-old",
      "node-a",
      3,
      "NodeBecameHealthy",
      JSON.stringify({ NodeID: "a", Previous: "UNKNOWN" }),
      JSON.stringify({ ...metadata(9), schemaVersion: 1 }),
      metadata(9).time,
    );
    db.close();
    const all = await again.readAll();
    expect(all.map((e) => e.schemaVersion)).toEqual([undefined, undefined, undefined, undefined, 1, 1, undefined]);
    expect(all.map((e) => decodeNodeEvent(e).type).at(-1)).toBe("NodeBecameHealthy");

    // The same history appended by this Shoal folds to the same states.
    const fresh = open(join(tempDir(), "shoal.db"));
    await appendAll(fresh, [
      ...events,
      [
        "node-a",
        {
          id: "e-old",
          type: "NodeBecameHealthy",
          data: { NodeID: "a", Previous: "UNKNOWN" },
          metadata: { ...metadata(9), schemaVersion: 1 },
        },
      ],
    ]);
    expect((await fresh.readAll()).map((e) => e.schemaVersion)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    const fromOld = await recover(again);
    expect(fromOld.events).toBe(7);
    expect(fromOld).toEqual(await recover(fresh));
  });

  it("is what the metadata says: the decoder takes it instead of parsing the metadata, and refuses an unknown version alike", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file);
    const [stream, registered] = history()[0]!;
    await store.append(stream, [registered], "no_stream");
    await store.append(
      stream,
      [{ ...registered, id: "v2", metadata: { ...registered.metadata, schemaVersion: 2 } }],
      0,
    );
    await store.append(
      stream,
      [{ ...registered, id: "v-text", metadata: { ...registered.metadata, schemaVersion: "1" } }],
      1,
    );
    expect(columnOf(file)).toEqual([1, 2, null]);
    const [ok, v2, text] = await store.readAll();
    expect(decodeNodeEvent(ok!).type).toBe("NodeRegistered");
    expect(() => decodeNodeEvent(v2!)).toThrow(/NodeRegistered schema version 2 is not known/);
    expect(() => decodeNodeEvent(text!)).toThrow(/NodeRegistered schema version 1 is not known/);
    expect(v2!.metadata.schemaVersion).toBe(2);
  });

  it("lets a fold skip a metadata text that is not JSON; whoever reads that metadata gets a CorruptEventError naming the event", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file);
    const events = history();
    await appendAll(store, events.slice(0, 2));
    const db = new Database(file);
    db.prepare("UPDATE events SET metadata = '{\"time\": broken' WHERE stream = 'node-a' AND revision = 1").run();
    db.close();
    const [, damaged] = await store.readAll();
    expect(decodeNodeEvent(damaged!).type).toBe("NodeBecameUnknown");
    expect(() => damaged!.metadata).toThrow(CorruptEventError);
    expect(() => damaged!.metadata).toThrow(/^stream node-a@1 \(position 2\): its metadata is not JSON: /);
    expect((await recover(store)).events).toBe(2);

    // Without the column's copy the version is in that text: the fold stops there, saying so.
    const db2 = new Database(file);
    db2.prepare("UPDATE events SET schema_version = NULL").run();
    db2.close();
    const [, unversioned] = await store.readAll();
    expect(() => decodeNodeEvent(unversioned!)).toThrow(/^stream node-a@1 \(position 2\): its metadata is not JSON: /);
    await expect(recover(store)).rejects.toThrow(CorruptEventError);
  });
});

describe("SQLite store: events of a newer schema version", () => {
  it("refuses the first in store order above what this Shoal reads of its type (types it does not name: version 1)", async () => {
    const store = open(join(tempDir(), "shoal.db"));
    const [[stream, registered], [, unknown]] = history() as [[string, NewEvent], [string, NewEvent]];
    const at = (id: string, type: string, version: number): NewEvent => ({
      ...registered,
      id,
      type,
      metadata: { ...registered.metadata, schemaVersion: version },
    });
    await store.append(stream, [registered, unknown], "no_stream");
    expect(() => store.refuseNewerEvents({ NodeRegistered: 1 })).not.toThrow();
    await store.append("workflow-x", [at("w1", "WorkflowStep", 1)], "any");
    await store.append("node-c", [at("c2", "NodeRegistered", 2), at("c3", "NodeApproved", 3)], "no_stream");
    await store.append("workflow-x", [at("w2", "WorkflowStep", 2)], "any");
    // NodeRegistered 2 is known to a Shoal that reads version 2; the workflow step at 2 comes later in the store.
    expect(() => store.refuseNewerEvents({ NodeRegistered: 2, NodeApproved: 3 })).toThrow(
      /^stream workflow-x@1 \(position 6\) holds a WorkflowStep of schema version 2; this Shoal reads WorkflowStep up to version 1: a newer Shoal wrote it/,
    );
    expect(() => store.refuseNewerEvents({ NodeRegistered: 1, NodeApproved: 1 })).toThrow(
      /^stream node-c@0 \(position 4\) holds a NodeRegistered of schema version 2; this Shoal reads NodeRegistered up to version 1: /,
    );
    expect(() => store.refuseNewerEvents({ NodeRegistered: 2, NodeApproved: 3, WorkflowStep: 2 })).not.toThrow();
  });
});

describe("schemaVersionColumn", () => {
  it("copies a safe integer the stored JSON will hold, and nothing it cannot be sure of", () => {
    expect(schemaVersionColumn({ time: "t", schemaVersion: 1 })).toBe(1);
    expect(
      schemaVersionColumn(Object.assign(Object.create(null) as Record<string, unknown>, { schemaVersion: 3 })),
    ).toBe(3);
    expect(Object.is(schemaVersionColumn({ schemaVersion: -0 }), 0)).toBe(true);
    for (const value of [
      "1",
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      null,
      true,
      undefined,
      [1],
      { v: 1 },
    ]) {
      expect(schemaVersionColumn({ schemaVersion: value })).toBeNull();
    }
    expect(schemaVersionColumn({})).toBeNull();
    // JSON.stringify would not write these as the property reads.
    expect(schemaVersionColumn(Object.create({ schemaVersion: 1 }) as Record<string, unknown>)).toBeNull();
    expect(schemaVersionColumn(Object.defineProperty({}, "schemaVersion", { value: 1, enumerable: false }))).toBeNull();
    expect(
      schemaVersionColumn(Object.defineProperty({}, "schemaVersion", { get: () => 1, enumerable: true })),
    ).toBeNull();
    expect(schemaVersionColumn({ schemaVersion: 1, toJSON: () => ({ schemaVersion: 2 }) })).toBeNull();
    class Meta {
      schemaVersion = 1;
    }
    expect(schemaVersionColumn(new Meta() as unknown as Record<string, unknown>)).toBeNull();
  });
});
