import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore, type SqliteEventStoreOptions } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { chainOf } from "../support/chain-check.ts";
import { tempDir } from "../support/fixtures.ts";
import { timeMarksOf } from "../support/time-marks-check.ts";

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

function open(file: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
  const store = new SqliteEventStore(file, options);
  opened.push(store);
  return store;
}

const ev = (type = "NodeApproved", n = 0): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n, text: "é ✓" },
  metadata: {
    time: new Date(Date.UTC(2026, 10, 29, 10, 0, n)).toISOString(),
    actor: { type: "operator", id: "alice" },
  },
});
const many = (k: number, type?: string) => Array.from({ length: k }, (_, i) => ev(type, i));

function expectChained(file: string): ReturnType<typeof chainOf> {
  const chain = chainOf(file);
  expect(chain.genesis.link).toBe(chain.genesis.expected);
  expect(chain.stored).toEqual(chain.expected);
  // Positions are given one after the other: a gap would read as a deleted row.
  const positions = chain.stored.map(([p]) => p);
  expect(positions).toEqual(positions.map((_, i) => chain.genesis.afterPosition + i + 1));
  return chain;
}

describe.each([
  ["on the event loop", false],
  ["on a writer thread", true],
])("SQLite hash chain with commits %s", (_, writerThread) => {
  it("links every event from the one before it, through batches, refusals and idempotent retries", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    await store.append("node-a", many(3), "no_stream");
    const retried = many(2);
    // In one tick: an append, a wrong expected revision, one of several events, and a retry of stored events.
    const first = await store.append("node-b", retried, "no_stream");
    const settled = await Promise.allSettled([
      store.append("node-c", many(1), "no_stream"),
      store.append("node-a", many(1), 0),
      store.append("node-d", many(5, "JobQueued"), "no_stream"),
      store.append("node-b", retried, "no_stream"),
      store.append("node-c", many(2), 0),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    expect((settled[3] as PromiseFulfilledResult<{ position: number }>).value.position).toBe(first.position);
    const chain = expectChained(file);
    expect(chain.genesis.afterPosition).toBe(0);
    expect(chain.stored).toHaveLength(3 + 2 + 1 + 5 + 2);
    expect(chain.stored.every(([, link]) => link !== null)).toBe(true);
  });

  it("takes a rolled-back batch's positions and links back, and goes on from the last event stored", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    await store.append("node-a", many(250), "no_stream");
    const db = new Database(file);
    // The batch's last write fails after its events were inserted and linked: it rolls back whole.
    db.exec("CREATE TRIGGER no_marks BEFORE INSERT ON time_marks BEGIN SELECT RAISE(ABORT, 'no marks'); END");
    await expect(store.append("node-b", many(10), "no_stream")).rejects.toThrow(/no marks/);
    db.exec("DROP TRIGGER no_marks");
    db.close();
    await store.append("node-b", many(10), "no_stream");
    expect(expectChained(file).stored).toHaveLength(260);
  });

  it("takes back the links of an append whose savepoint failed, keeping the others of its batch", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    await store.append("node-a", many(4), "no_stream");
    const db = new Database(file);
    db.exec(
      "CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.type = 'Poison' BEGIN SELECT RAISE(ABORT, 'poison'); END",
    );
    const settled = await Promise.allSettled([
      store.append("node-b", [ev(), ev(), ev("Poison")], "no_stream"),
      store.append("node-c", many(3), "no_stream"),
    ]);
    db.close();
    expect(settled.map((s) => s.status)).toEqual(["rejected", "fulfilled"]);
    expect(expectChained(file).stored).toHaveLength(7);
  });

  it("goes on from the newest link after a restart", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    await store.append("node-a", many(3), "no_stream");
    await opened.pop()!.close();
    const again = open(file, { writerThread });
    await again.append("node-a", many(3), 2);
    expect(expectChained(file).stored).toHaveLength(6);
  });

  it("links on from another writer's events when two processes append to one file in turn", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file, { writerThread });
    const other = open(file, { writerThread });
    await store.append("node-a", many(3), "no_stream");
    await other.append("node-b", many(2), "no_stream");
    await store.append("node-a", many(1), 2);
    await other.append("node-b", many(4), 1);
    await store.append("node-c", many(2), "no_stream");
    expect(expectChained(file).stored).toHaveLength(3 + 2 + 1 + 4 + 2);
  });
});

describe("SQLite time marks with two writers on one file", () => {
  it("hold the other writer's times: the running maximum and the skew are the file's, not one writer's", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file);
    const other = open(file);
    const at = (seconds: number): NewEvent => ({
      ...ev(),
      metadata: { time: new Date(Date.UTC(2026, 10, 29, 10, 0, 0) + seconds * 1000).toISOString() },
    });
    await store.append(
      "node-a",
      Array.from({ length: 250 }, (_, i) => at(i)),
      "no_stream",
    );
    // The other writer's events are the latest in time; it writes the mark at 256.
    await other.append(
      "node-b",
      Array.from({ length: 10 }, () => at(10_000)),
      "no_stream",
    );
    // This writer's next events are earlier than those: the mark at 512 and the skew must say so.
    await store.append(
      "node-a",
      Array.from({ length: 300 }, (_, i) => at(300 + i)),
      249,
    );
    const { stored, expected } = timeMarksOf(file);
    expect(stored).toEqual(expected);
  });
});

describe("SQLite store file version 3", () => {
  it("covers a version 2 file's events with a genesis, logged once with counts and ms, rewriting none", async () => {
    const file = join(tempDir(), "shoal.db");
    const v2 = open(file);
    await v2.append("node-a", many(40), "no_stream");
    await v2.append("job-j", many(2, "JobQueued"), "no_stream");
    await opened.pop()!.close();
    // The same file as a Shoal of store file version 2 left it.
    const db = new Database(file);
    db.exec("DROP TABLE chain_genesis; DROP TABLE audit_checkpoints; ALTER TABLE events DROP COLUMN link");
    db.pragma("user_version = 2");
    const before = db.prepare("SELECT * FROM events ORDER BY position").all();
    db.close();

    const { logger, messages } = capturedLogger();
    const store = open(file, { logger });
    const [genesis] = messages("covered by its genesis");
    expect(genesis).toMatchObject({ events: 42, afterPosition: 42, ms: expect.any(Number) });
    await store.append("node-a", many(2), 39);
    await opened.pop()!.close();

    const chain = expectChained(file);
    expect(chain.genesis.afterPosition).toBe(42);
    expect(chain.stored.map(([p]) => p)).toEqual([43, 44]);
    const after = new Database(file, { readonly: true });
    const rows = after.prepare("SELECT * FROM events WHERE position <= 42 ORDER BY position").all();
    expect(after.pragma("user_version", { simple: true })).toBe(3);
    after.close();
    expect(rows).toEqual(before.map((r) => ({ ...(r as object), link: null })));

    const again = capturedLogger();
    open(file, { logger: again.logger });
    expect(again.messages("store upgraded")).toEqual([]);
  });
});

describe("bench stores", () => {
  it("are built through the writer, so every row is linked", async () => {
    const { buildStore } = await import("../../bench/store-read.ts");
    const file = join(tempDir(), "shoal.db");
    await buildStore(file, 5000);
    const chain = expectChained(file);
    expect(chain.stored).toHaveLength(5000);
  });
});
