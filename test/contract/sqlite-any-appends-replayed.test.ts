import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DuplicateEventIdError, SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";

/**
 * What a workflow host relies on when it replays a batch after a restart: its step records, each appended on its own
 * with a deterministic id and "any", are acknowledged again one by one, however many are in flight together and
 * whichever of them are stored. A multi-event append that overlaps a stored one only in part is refused, which is
 * why the host never merges a batch's steps into one append (a replay cuts the lane's batches elsewhere).
 */
const ev = (id: string): NewEvent => ({
  id,
  type: "Step",
  data: { id },
  metadata: { time: "2026-01-01T00:00:00.000Z" },
});

describe.each([
  ["on the event loop", false],
  ["on a writer thread", true],
])("SQLite appends replayed %s", (_, writerThread) => {
  const stores: SqliteEventStore[] = [];
  const open = () => {
    const store = new SqliteEventStore(join(tempDir("shoal-any-replayed-"), "shoal.db"), { writerThread });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it("acknowledges concurrent single-event 'any' appends, some already stored, and stores none twice", async () => {
    const store = open();
    const ids = Array.from({ length: 40 }, (_, i) => `step-${i}`);
    const stored = ids.filter((_, i) => i % 3 === 0);
    for (const id of stored) await store.append("workflow-w", [ev(id)], "any");
    const revisionOf = new Map(stored.map((id, revision) => [id, revision]));

    const commitsBefore = store.commitStats.commits;
    const results = await Promise.allSettled(ids.map((id) => store.append("workflow-w", [ev(id)], "any")));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    // One tick's appends share a commit (or a few, on the writer thread's pipeline).
    expect(store.commitStats.commits - commitsBefore).toBeLessThan(ids.length / 4);
    // A stored one is acknowledged where it is.
    for (const [i, id] of ids.entries())
      if (revisionOf.has(id))
        expect(results[i]).toMatchObject({ status: "fulfilled", value: { nextExpectedRevision: revisionOf.get(id) } });

    const read = await store.readStream("workflow-w");
    expect(read).toHaveLength(ids.length);
    expect(new Set(read.map((e) => e.id))).toEqual(new Set(ids));
    expect(read.slice(0, stored.length).map((e) => e.id)).toEqual(stored);
    // The new ones in the order they were appended.
    expect(read.slice(stored.length).map((e) => e.id)).toEqual(ids.filter((id) => !revisionOf.has(id)));
  });

  it("refuses a multi-event 'any' append overlapping a stored one in part, and stores nothing of it", async () => {
    const store = open();
    await store.append("workflow-w", [ev("s1"), ev("s2")], "any");
    // The stored append's tail and a new step: what a replay whose batch starts one input later would append.
    await expect(store.append("workflow-w", [ev("s2"), ev("s3")], "any")).rejects.toBeInstanceOf(DuplicateEventIdError);
    // The whole stored append and a new step: a replay whose batch ends one input later.
    await expect(store.append("workflow-w", [ev("s1"), ev("s2"), ev("s3")], "any")).rejects.toBeInstanceOf(
      DuplicateEventIdError,
    );
    expect((await store.readStream("workflow-w")).map((e) => e.id)).toEqual(["s1", "s2"]);
    // The very same append is acknowledged again, and the steps one by one are too.
    await expect(store.append("workflow-w", [ev("s1"), ev("s2")], "any")).resolves.toMatchObject({
      nextExpectedRevision: 1,
    });
    for (const id of ["s2", "s3"]) await store.append("workflow-w", [ev(id)], "any");
    expect((await store.readStream("workflow-w")).map((e) => e.id)).toEqual(["s1", "s2", "s3"]);
  });
});
