import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent, RecordedEvent, StoreSubscription } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";

/**
 * A SQLite subscription that follows the store is handed what this process just committed
 * without reading it back; what it delivers must still be exactly what the store holds: every
 * event once, in order, field for field as a read returns it, whatever the appends were.
 */
const ev = (type: string, metadata: Record<string, unknown> = { time: "2026-01-01T00:00:00.000Z" }): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n: type, nested: { list: [1, "two", null] } },
  metadata: { ...metadata, schemaVersion: 1 },
});

/** The fields of a recorded event, read through its getters (data and metadata are parsed lazily). */
const fields = (e: RecordedEvent) => ({
  id: e.id,
  stream: e.stream,
  revision: e.revision,
  position: e.position,
  type: e.type,
  time: e.time,
  schemaVersion: e.schemaVersion,
  data: e.data,
  metadata: e.metadata,
});

describe("SQLite subscription following this process's commits", () => {
  const stores: SqliteEventStore[] = [];
  const subs: StoreSubscription[] = [];
  afterEach(async () => {
    for (const s of subs.splice(0)) await s.stop();
    for (const s of stores.splice(0)) await s.close();
  });

  function open(file: string): SqliteEventStore {
    const store = new SqliteEventStore(file);
    stores.push(store);
    return store;
  }

  function follow(store: SqliteEventStore, after = 0) {
    const seen: RecordedEvent[] = [];
    const sub = store.subscribeToAll({ after }, (e) => void seen.push(e));
    subs.push(sub);
    const until = async (n: number) => {
      await vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(n), { timeout: 5_000, interval: 5 });
      return seen;
    };
    return { seen, until };
  }

  it("delivers every committed event once, in order, exactly as a read returns it", async () => {
    const file = join(tempDir(), "events.db");
    const store = open(file);
    const sub = follow(store);
    await store.append("a", [ev("A0")], "no_stream");
    // A multi-event append, and appends of one tick sharing one commit.
    await store.append("a", [ev("A1"), ev("A2"), ev("A3")], 0);
    const retried = [ev("B0"), ev("B1")];
    await Promise.all([store.append("b", retried, "no_stream"), store.append("c", [ev("C0")], "no_stream")]);
    // A retry acknowledged again stores nothing, so it delivers nothing new.
    await store.append("b", retried, "no_stream");
    // A refused append, among others in its tick.
    const [refused] = await Promise.allSettled([store.append("a", [ev("Wrong")], 0), store.append("c", [ev("C1")], 0)]);
    expect(refused.status).toBe("rejected");
    // No time in the metadata: the writer stamps it, and only the store knows what it wrote.
    await store.append("d", [ev("D0", {})], "no_stream");
    await store.append("d", [ev("D1")], 0);
    // Another writer of the same file between two of this process's commits.
    const other = open(file);
    await other.append("e", [ev("E0")], "no_stream");
    await store.append("a", [ev("A4")], 3);

    const stored = await store.readAll();
    expect(stored.map((e) => e.type)).toEqual(["A0", "A1", "A2", "A3", "B0", "B1", "C0", "C1", "D0", "D1", "E0", "A4"]);
    const seen = await sub.until(stored.length);
    // Nothing more arrives (no event twice).
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.map(fields)).toEqual(stored.map(fields));
  });

  it("hands a caught-up subscription the events of each commit without reading the store back", async () => {
    const store = open(join(tempDir(), "events.db"));
    await store.append("a", [ev("Before")], "no_stream");
    const sub = follow(store);
    await sub.until(1);
    const reads = vi.spyOn(store, "readAll");
    for (let i = 1; i <= 20; i++) {
      await store.append("a", [ev(`Live${i}`)], i - 1);
      await sub.until(i + 1);
    }
    expect(reads).not.toHaveBeenCalled();
    expect(sub.seen.map(fields)).toEqual((await store.readAll()).map(fields));
  });

  it("reads the store when it is behind what this process keeps, and joins the live commits after", async () => {
    const store = open(join(tempDir(), "events.db"));
    // More than the tail keeps: a subscription starting at 0 catches up from the file.
    const many = Array.from({ length: 3000 }, (_, i) => store.append(`s-${i % 7}`, [ev(`E${i}`)], "any"));
    await Promise.all(many);
    const early = follow(store);
    await store.append("x", [ev("Live")], "no_stream");
    const late = follow(store, 2990);
    await store.append("x", [ev("Live2")], 0);
    const stored = await store.readAll({ maxCount: 10_000 });
    expect((await early.until(stored.length)).map(fields)).toEqual(stored.map(fields));
    expect((await late.until(stored.length - 2990)).map(fields)).toEqual(stored.slice(2990).map(fields));
  });
});
