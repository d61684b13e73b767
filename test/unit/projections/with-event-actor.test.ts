import { join } from "node:path";
import { Schema } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../../machines/job/history-event.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../../machines/job/job-defaults.ts";
import type { JobCommand } from "../../../machines/job/job-commands.ts";
import { jobDecider } from "../../../machines/job/job-decider.ts";
import { validateJobSubmission } from "../../../src/actors/job-submission/validate-job-submission.ts";
import { EventMetadata } from "../../../src/events/catalog/event-metadata.ts";
import { decodeJobEvent, encodeJobEvent } from "../../../src/events/catalog/job-event-codec.ts";
import { SqliteEventStore } from "../../../src/events/sqlite/sqlite-event-store.ts";
import { jobStream } from "../../../src/events/streams.ts";
import { JobHistory } from "../../../src/projections/jobs/job-history.ts";
import { withEventActor } from "../../../src/projections/jobs/with-event-actor.ts";
import { tempDir } from "../../support/fixtures.ts";

const alice = { type: "operator", id: "alice" };

describe("withEventActor: who caused a history entry and why, in its Details", () => {
  const running: HistoryEvent = { Topic: "Execution", Message: "Running", Details: {} };

  it("adds the actor as <type>:<id>, and the reason when the entry does not already say it", () => {
    expect(withEventActor(running, { actor: { type: "node", id: "n-3" }, reason: "the execution started" })).toEqual({
      ...running,
      Details: { Actor: "node:n-3", Reason: "the execution started" },
    });
    const queued = { Topic: "Queueing", Message: "Job queued. not enough nodes to run job.", Details: {} };
    expect(withEventActor(queued, { actor: { type: "workflow", id: "jobs" }, reason: queued.Message })).toEqual({
      ...queued,
      Details: { Actor: "workflow:jobs" },
    });
    // A retry's Message holds its reason already.
    const retry = {
      Topic: "Scheduling",
      Message: "Requested execution on n-2 (retry of partition 0)",
      Details: { NodeID: "n-2" },
    };
    expect(withEventActor(retry, { actor: alice, reason: "retry of partition 0" }).Details).toEqual({
      Actor: "operator:alice",
      NodeID: "n-2",
    });
  });

  it("keeps the entry's own details as Bacalhau has them: a stop's Reason is never replaced", () => {
    const stop = { Topic: "Scheduling", Message: "Job requested to stop", Details: { Reason: "maintenance" } };
    expect(withEventActor(stop, { actor: alice, reason: "something else" }).Details).toEqual({
      Actor: "operator:alice",
      Reason: "maintenance",
    });
  });

  it("adds nothing for metadata without an actor or a reason, or with one that is not a type and an id", () => {
    for (const metadata of [
      {},
      { reason: "" },
      { actor: null },
      { actor: "alice" },
      { actor: { type: "operator" } },
      { actor: { type: "operator", id: "" } },
      { actor: { type: 1, id: "alice" } },
      { reason: 7 },
    ]) {
      expect(withEventActor(running, metadata), JSON.stringify(metadata)).toBe(running);
    }
    expect(withEventActor(running, { reason: "old" })).toEqual({ ...running, Details: { Reason: "old" } });
  });
});

describe("JobHistory over a store holding events from before the actor was shown", () => {
  const stores: SqliteEventStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it("shows the actor where the metadata has one, and reads an event without one as before", async () => {
    const jobId = "j-00000000-0000-4000-8000-0000000000a1";
    const time = "2026-11-29T08:00:00.000Z";
    const submission = validateJobSubmission(
      { Type: "batch", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }] },
      { jobId, defaults: BACALHAU_JOB_DEFAULTS },
    );
    let state = jobDecider.initialState(jobId);
    const events = [];
    for (const command of [
      { type: "Submit", submission },
      { type: "Stop", reason: "enough" },
    ] as JobCommand[]) {
      const decided = jobDecider.decide(command, state, { now: Date.parse(time) });
      if (!decided.ok) throw new Error(JSON.stringify(decided.refusal));
      for (const e of decided.events) state = jobDecider.evolve(state, e, time);
      events.push(...decided.events);
    }
    const [submitted, stopped] = events.map((e, i) =>
      encodeJobEvent(
        e,
        { time, actor: { type: "operator", id: "alice" }, correlationId: "c", causationId: "c" },
        `${i}`,
      ),
    );
    // The submit as a store written without actor or reason has it.
    const { actor: _actor, ...old } = submitted!.metadata;
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    stores.push(store);
    await store.append(jobStream(jobId), [{ ...submitted!, metadata: old }], "no_stream");
    await store.append(jobStream(jobId), [{ ...stopped!, metadata: { ...stopped!.metadata, reason: "enough" } }], 0);

    const { items } = await new JobHistory(store).entries(jobId, [], { eventType: "all", limit: 10 });
    expect(items.map((h) => [h.Event.Message, h.Event.Details])).toEqual([
      ["Job submitted", {}],
      ["Job requested to stop before completion", { Actor: "operator:alice", Reason: "enough" }],
    ]);
  });

  it("reads and shows a workflow's events stored as a system actor by an older Shoal, beside those of today", async () => {
    const jobId = "j-00000000-0000-4000-8000-0000000000a2";
    const time = "2026-11-29T08:00:00.000Z";
    const submission = validateJobSubmission(
      { Type: "batch", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }] },
      { jobId, defaults: BACALHAU_JOB_DEFAULTS },
    );
    let state = jobDecider.initialState(jobId);
    const older = { type: "system", id: "workflow-jobs" } as const;
    const today = { type: "workflow", id: "jobs" } as const;
    const actors = [{ type: "operator", id: "alice" } as const, older, today];
    const commands: JobCommand[] = [{ type: "Submit", submission }, { type: "Run" }, { type: "Complete" }];
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    stores.push(store);
    for (const [i, command] of commands.entries()) {
      const decided = jobDecider.decide(command, state, { now: Date.parse(time) });
      if (!decided.ok) throw new Error(JSON.stringify(decided.refusal));
      for (const e of decided.events) state = jobDecider.evolve(state, e, time);
      const metadata = { time, actor: actors[i]!, correlationId: "c", causationId: "c" };
      const encoded = decided.events.map((e, j) => encodeJobEvent(e, metadata, `${i}-${j}`));
      await store.append(jobStream(jobId), encoded, "any");
    }

    const stored = await store.readStream(jobStream(jobId));
    expect(stored.map((e) => [e.type, e.metadata.actor])).toEqual([
      ["JobSubmitted", alice],
      ["JobStarted", older],
      ["JobCompleted", today],
    ]);
    for (const e of stored) {
      expect(() => decodeJobEvent(e)).not.toThrow();
      expect(Schema.decodeUnknownSync(EventMetadata)(e.metadata).actor).toEqual(e.metadata.actor);
    }
    const { items } = await new JobHistory(store).entries(jobId, [], { eventType: "all", limit: 10 });
    expect(items.map((h) => h.Event.Details.Actor)).toEqual([
      "operator:alice",
      "system:workflow-jobs",
      "workflow:jobs",
    ]);
  });
});
