import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DuplicateEventIdError,
  SqliteEventStore,
  type CommitBatch,
} from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../../src/events/store/store-errors.ts";
import { tempDir } from "../support/fixtures.ts";
import {
  mountExt4,
  mountTmpfs,
  whyCannotMount,
  whyCannotMountExt4,
  type ScratchFs,
} from "../support/scratch-filesystem.ts";

/**
 * SQLite's group commit: writes made in one turn of the event loop share one transaction and
 * one fsync; inside it each append is decided on its own (and sees the ones before it), and a
 * failure of the store itself fails all of them and stores none.
 */
const ev = (type = "Tick", data: unknown = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { time: "2026-01-01T00:00:00.000Z" },
});

function settle<A>(p: Promise<A>): Promise<PromiseSettledResult<A>> {
  return p.then(
    (value) => ({ status: "fulfilled", value }),
    (reason: unknown) => ({ status: "rejected", reason }),
  );
}

const cannotMount = whyCannotMount();
const cannotMountExt4 = whyCannotMountExt4();
if (cannotMount) console.warn(`SQLite group-commit fault tests skipped: ${cannotMount}`);
if (cannotMountExt4) console.warn(`SQLite group-commit read-only test skipped: ${cannotMountExt4}`);

// The same guarantees with the commits on the event loop (the default) and on a writer thread.
describe.each([
  ["on the event loop", false],
  ["on a writer thread", true],
])("SQLite group commit %s", (_, writerThread) => {
  const stores: SqliteEventStore[] = [];
  const open = (file = join(tempDir(), "shoal.db"), groupCommit = true) => {
    const store = new SqliteEventStore(file, { groupCommit, writerThread });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it("commits the appends and checkpoint saves of one tick together, once, and counts them", async () => {
    const store = open();
    const batches: CommitBatch[] = [];
    const unsubscribe = store.onCommit((b) => batches.push(b));
    await Promise.all([
      store.append("node-a", [ev(), ev()], "no_stream"),
      store.append("node-b", [ev()], "no_stream"),
      store.save("publisher", 7),
      store.append("node-c", [ev()], "no_stream"),
    ]);
    expect(batches).toEqual([{ appends: 3, events: 4, saves: 1 }]);
    expect(store.commitStats).toEqual({
      commits: 1,
      appends: 3,
      events: 4,
      lastBatchAppends: 3,
      lastBatchEvents: 4,
      largestBatchEvents: 4,
    });
    expect(await store.load("publisher")).toBe(7);

    await store.append("node-a", [ev()], 1);
    expect(store.commitStats).toMatchObject({
      commits: 2,
      appends: 4,
      events: 5,
      lastBatchAppends: 1,
      lastBatchEvents: 1,
      largestBatchEvents: 4,
    });
    unsubscribe();
    await store.append("node-a", [ev()], 2);
    expect(batches).toHaveLength(2);
  });

  it("commits each write on its own with groupCommit: false", async () => {
    const store = open(undefined, false);
    await Promise.all(["a", "b", "c"].map((n) => store.append(`node-${n}`, [ev()], "no_stream")));
    expect(store.commitStats).toMatchObject({ commits: 3, events: 3, largestBatchEvents: 1 });
  });

  it("checks a second append to the same stream in one tick against the first one's result", async () => {
    const store = open();
    const [first, second, stale, any] = await Promise.allSettled([
      store.append("node-s", [ev("A")], "no_stream"),
      store.append("node-s", [ev("B"), ev("C")], 0),
      store.append("node-s", [ev("Late")], "no_stream"),
      store.append("node-s", [ev("D")], "any"),
    ]);
    expect(first).toMatchObject({ status: "fulfilled", value: { nextExpectedRevision: 0 } });
    expect(second).toMatchObject({ status: "fulfilled", value: { nextExpectedRevision: 2 } });
    expect(stale).toMatchObject({ status: "rejected", reason: { _tag: "WrongExpectedRevision", actual: 2 } });
    expect(any).toMatchObject({ status: "fulfilled", value: { nextExpectedRevision: 3 } });
    expect((await store.readStream("node-s")).map((e) => [e.type, e.revision])).toEqual([
      ["A", 0],
      ["B", 1],
      ["C", 2],
      ["D", 3],
    ]);
    expect(store.commitStats.commits).toBe(1);
  });

  it("acknowledges an append and its retry made in the same tick with one result, stored once", async () => {
    const store = open();
    const events = [ev("One"), ev("Two")];
    const [original, retry] = await Promise.all([
      store.append("node-r", events, "no_stream"),
      store.append("node-r", events, "no_stream"),
    ]);
    expect(retry).toEqual(original);
    expect(original.nextExpectedRevision).toBe(1);
    expect((await store.readStream("node-r")).map((e) => e.id)).toEqual(events.map((e) => e.id));
  });

  it("fails alone, storing none of its events, an append whose second event id is stored elsewhere", async () => {
    const store = open();
    const taken = ev("Taken");
    await store.append("node-owner", [taken], "no_stream");
    const [before, dup, after] = await Promise.allSettled([
      store.append("node-x", [ev("X")], "no_stream"),
      store.append("node-d", [ev("Fresh"), taken], "no_stream"),
      store.append("node-y", [ev("Y")], "no_stream"),
    ]);
    expect(before.status).toBe("fulfilled");
    expect(after.status).toBe("fulfilled");
    expect(dup).toMatchObject({ status: "rejected", reason: expect.any(DuplicateEventIdError) });
    expect(((dup as PromiseRejectedResult).reason as Error).message).toMatch(
      /already stored in node-owner at revision 0/,
    );
    expect(await store.readStream("node-d")).toEqual([]);
    expect((await store.readStream("node-x")).map((e) => e.type)).toEqual(["X"]);
    expect((await store.readStream("node-y")).map((e) => e.type)).toEqual(["Y"]);
  });

  it("fails alone an append whose data cannot be stored as JSON", async () => {
    const store = open();
    const [ok, bad] = await Promise.allSettled([
      store.append("node-ok", [ev("Fine")], "no_stream"),
      store.append("node-bad", [ev("Fine"), ev("Big", { n: 1n })], "no_stream"),
    ]);
    expect(ok.status).toBe("fulfilled");
    expect(bad).toMatchObject({ status: "rejected", reason: expect.any(TypeError) });
    expect(await store.readStream("node-bad")).toEqual([]);
  });

  it("commits the writes still queued when closed, then refuses new ones", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file);
    const pending = [store.append("node-q", [ev("Queued")], "no_stream"), store.save("publisher", 3)];
    await store.close();
    await expect(Promise.all(pending)).resolves.toEqual([{ nextExpectedRevision: 0, position: 1 }, undefined]);
    await expect(store.append("node-q", [ev()], 0)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.save("publisher", 4)).rejects.toBeInstanceOf(StoreUnavailableError);
    const reopened = open(file);
    expect((await reopened.readStream("node-q")).map((e) => e.type)).toEqual(["Queued"]);
    expect(await reopened.load("publisher")).toBe(3);
  });

  it("takes a storm of appends in slices: every caller acknowledged, in order, none lost", async () => {
    const store = open();
    const n = 10_000;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => store.append(`node-${i}`, [ev("Storm", { i })], "no_stream")),
    );
    expect(results.map((r) => r.position)).toEqual(results.map((_, i) => i + 1));
    expect(store.commitStats.commits).toBeGreaterThan(1);
    expect(store.commitStats.largestBatchEvents).toBeLessThanOrEqual(4096);
    expect((await store.readAll()).map((e) => (e.data as { i: number }).i)).toEqual(results.map((_, i) => i));
  });

  describe.skipIf(cannotMount !== undefined)("on a real full or read-only filesystem", () => {
    const mounted: ScratchFs[] = [];
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close();
      for (const m of mounted.splice(0)) m.unmount();
    });
    const big = (type: string) => ev(type, { pad: "x".repeat(2000) });

    /** A batch of three appends (one with a wrong expected revision) and a checkpoint save, in one tick. */
    async function failingBatch(store: SqliteEventStore): Promise<PromiseSettledResult<unknown>[]> {
      return Promise.all([
        settle(store.append("node-a", [big("A1"), big("A2")], 0)),
        settle(store.append("node-b", [big("B0")], "no_stream")),
        settle(store.append("node-c", [big("C0")], 5)),
        settle(store.save("publisher", 99)),
      ]);
    }

    async function expectNothingStored(store: SqliteEventStore): Promise<void> {
      expect((await store.readStream("node-a")).map((e) => e.type)).toEqual(["A0"]);
      expect(await store.readStream("node-b")).toEqual([]);
      expect(await store.readStream("node-c")).toEqual([]);
      expect(await store.load("publisher")).toBe(1);
    }

    it("rejects every caller of a batch as unavailable when the disk is full, stores none, and takes them once space is back", async () => {
      const fs = mountTmpfs(32 * 1024 * 1024);
      mounted.push(fs);
      const store = open(join(fs.dir, "shoal.db"));
      await store.append("node-a", [big("A0")], "no_stream");
      await store.save("publisher", 1);
      const commits = store.commitStats.commits;

      fs.fill();
      const settled = await failingBatch(store);
      for (const s of settled) {
        expect(s.status).toBe("rejected");
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
        expect(((s as PromiseRejectedResult).reason as Error).message).toMatch(/the disk is full \(SQLITE_FULL/);
      }
      expect(store.commitStats.commits).toBe(commits);
      await expectNothingStored(store);

      fs.free();
      const again = await failingBatch(store);
      expect(again.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect((again[2] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
      expect((await store.readStream("node-a")).map((e) => e.type)).toEqual(["A0", "A1", "A2"]);
      expect(await store.load("publisher")).toBe(99);
    });

    it.skipIf(cannotMountExt4 !== undefined)(
      "rejects every caller of a batch as unavailable when the filesystem turns read-only, and stores none",
      async () => {
        const fs = mountExt4(64 * 1024 * 1024);
        mounted.push(fs);
        const file = join(fs.dir, "shoal.db");
        const store = open(file);
        await store.append("node-a", [big("A0")], "no_stream");
        await store.save("publisher", 1);

        fs.failReadOnly();
        const settled = await failingBatch(store);
        for (const s of settled) {
          expect(s.status).toBe("rejected");
          expect(((s as PromiseRejectedResult).reason as Error).message).toMatch(
            /^event store unavailable: it is read-only \(the filesystem holding .* is read-only\)/,
          );
        }
        await expectNothingStored(store);
      },
    );
  });
});
