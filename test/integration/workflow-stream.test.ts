import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { WorkflowStream } from "../../src/workflows/workflow-stream.ts";
import { storesPerTest } from "../support/stores-per-test.ts";

/**
 * A workflow's stream writer on a real SQLite file: records in flight together go at consecutive exact revisions and
 * share the store's group commit; a revision another writer took sends them again, each stored once.
 */
const openStore = storesPerTest("shoal-workflow-stream-");
const record = (id: string): NewEvent => ({ id, type: "Step", data: { id }, metadata: { time: "t" } });
const STREAM = "workflow-w";

describe("a workflow stream", () => {
  it("appends records in flight together at consecutive revisions, in a few commits, in the order asked", async () => {
    const store = openStore();
    const steps = new WorkflowStream(store, STREAM);
    const ids = Array.from({ length: 40 }, (_, i) => `step-${i}`);
    const commitsBefore = store.commitStats.commits;
    const results = await Promise.all(ids.map((id) => steps.append(record(id))));
    expect(results.map((r) => r.nextExpectedRevision)).toEqual(ids.map((_, i) => i));
    // The revision read, then one round: a commit or a few.
    expect(store.commitStats.commits - commitsBefore).toBeLessThan(ids.length / 4);
    expect((await store.readStream(STREAM)).map((e) => e.id)).toEqual(ids);
  });

  it("sends a round again after another writer took its revisions, storing each record once", async () => {
    const store = openStore();
    const steps = new WorkflowStream(store, STREAM);
    await steps.append(record("first"));
    const ids = Array.from({ length: 10 }, (_, i) => `step-${i}`);
    const appended = Promise.all(ids.map((id) => steps.append(record(id))));
    // In the same tick, ahead of the round in the store's queue: every revision the round names is one too low.
    await store.append(STREAM, [record("other")], "any");
    const results = await appended;
    // The first went again, after those its conflict did not stop (records in flight together have no order).
    const stored = await store.readStream(STREAM);
    expect(stored.slice(0, 2).map((e) => e.id)).toEqual(["first", "other"]);
    expect(stored.slice(2).map((e) => e.id)).toEqual([...ids.slice(1), ids[0]]);
    expect(results.map((r) => r.nextExpectedRevision)).toEqual(ids.map((id) => stored.findIndex((e) => e.id === id)));
  });

  it("finds a record whose append landed unheard among what the stream gained, and stores it once", async () => {
    const store = openStore();
    const steps = new WorkflowStream(store, STREAM);
    await steps.append(record("first"));
    // Another writer appends the record where this writer will send it next, as if its own answer had been lost.
    await store.append(STREAM, [record("lost")], 0);
    await store.append(STREAM, [record("other")], 1);
    await expect(steps.append(record("lost"))).resolves.toMatchObject({ nextExpectedRevision: 1 });
    await steps.append(record("next"));
    expect((await store.readStream(STREAM)).map((e) => e.id)).toEqual(["first", "lost", "other", "next"]);
  });
});
