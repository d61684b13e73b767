import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { StoreHealth } from "../../src/orchestrator/store-health.ts";
import { tempDir } from "../support/fixtures.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const event = () => ({ id: randomUUID(), type: "Probed", data: {}, metadata: {} });

describe("the store readiness check", () => {
  it("fails while the store can be read but not written, and recovers once writes work again", async () => {
    const file = join(tempDir(), "shoal.db");
    const inner = new SqliteEventStore(file);
    cleanups.push(() => inner.close());
    const health = new StoreHealth(inner, `SQLite store ${file}`);
    await health.store.append("node-a", [event()], "no_stream");
    expect(await health.check()).toMatchObject({
      ok: true,
      reason: `SQLite store ${file} is readable and its last write succeeded`,
    });

    // Another process holds SQLite's write lock (WAL: readers still read).
    const other = new Database(file);
    cleanups.push(() => other.close());
    other.exec("BEGIN IMMEDIATE");
    await expect(health.store.append("node-a", [event()], 0)).rejects.toThrow(/locked|busy/i);
    const failing = await health.check();
    expect(failing).toMatchObject({
      ok: false,
      reason: expect.stringMatching(new RegExp(`^SQLite store .* cannot be written: .*(locked|busy)`, "i")),
    });
    expect(typeof failing.since).toBe("number");

    other.exec("ROLLBACK");
    expect(await health.check()).toMatchObject({ ok: true, reason: `SQLite store ${file} accepts writes again` });
    expect(await health.check()).toMatchObject({
      ok: true,
      reason: `SQLite store ${file} is readable and its last write succeeded`,
    });
  }, 60_000);

  it("with a writer thread, gives the last write's failure when its probe only times out on the lock", async () => {
    const file = join(tempDir(), "shoal.db");
    const inner = new SqliteEventStore(file, { writerThread: true });
    cleanups.push(() => inner.close());
    const health = new StoreHealth(inner, `SQLite store ${file}`);
    await health.store.append("node-a", [event()], "no_stream");

    const other = new Database(file);
    cleanups.push(() => other.close());
    other.exec("BEGIN IMMEDIATE");
    await expect(health.store.append("node-a", [event()], 0)).rejects.toThrow(/locked|busy/i);
    // The writer thread waits out SQLite's busy timeout off the event loop: the probe's own write outlasts its bound.
    const failing = await health.check();
    expect(failing).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /^SQLite store .* cannot be written: a write did not answer within \d+ms; the last write failed: .*(locked|busy)/i,
      ),
    });

    other.exec("ROLLBACK");
    await expect(health.store.append("node-a", [event()], 0)).resolves.toMatchObject({ nextExpectedRevision: 1 });
    expect(await health.check()).toMatchObject({
      ok: true,
      reason: `SQLite store ${file} is readable and its last write succeeded`,
    });
  }, 60_000);

  it("does not count a concurrency conflict against the store", async () => {
    const file = join(tempDir(), "shoal.db");
    const inner = new SqliteEventStore(file);
    cleanups.push(() => inner.close());
    const health = new StoreHealth(inner, "the store");
    await health.store.append("node-a", [event()], "no_stream");
    await expect(health.store.append("node-a", [event()], "no_stream")).rejects.toMatchObject({
      _tag: "WrongExpectedRevision",
    });
    expect(await health.check()).toEqual({ ok: true, reason: "the store is readable and its last write succeeded" });
  });

  it("fails when the store cannot be read at all", async () => {
    const file = join(tempDir(), "shoal.db");
    const inner = new SqliteEventStore(file);
    const health = new StoreHealth(inner, "the store");
    await inner.close();
    expect(await health.check()).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the store cannot be read: /),
    });
  });
});
