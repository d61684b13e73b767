import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { randomUUID } from "node:crypto";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { EntityActor } from "../../src/actors/entity-actor.ts";
import { nodeKind } from "../../src/actors/node-kind.ts";
import { ShoalError, asShoalError } from "../../src/errors/shoal-error.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { AppendResult, EventStore, ExpectedRevision, NewEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { computeInfo, tempDir } from "../support/fixtures.ts";
import { ManualClock, settle } from "../support/manual-clock.ts";
import { nodeActor } from "../support/node-actor.ts";

const ctx = commandContext({ type: "operator", id: "alice" });
const register = (nodeId: string) => ({ type: "Register" as const, info: computeInfo(nodeId), manualApproval: true });

const stores: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
function sqlite(): SqliteEventStore {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  stores.push(store);
  return store;
}

/**
 * A real SQLite store whose acknowledgements get lost: every append really happens, but the
 * first `lose` replies never reach the caller, who is told the store was unavailable. That is
 * what a dropped connection to EventStoreDB does after a commit; neither a lost reply nor
 * EventStoreDB can be produced for real on this machine, so this one decorator stands in for the
 * network. It records what each attempt sent.
 */
class LostAcknowledgements {
  readonly attempts: { ids: string[]; expected: ExpectedRevision }[] = [];
  constructor(
    readonly inner: SqliteEventStore,
    private lose: number,
  ) {}
  asStore(): EventStore {
    return Object.assign(Object.create(this.inner) as EventStore, {
      append: async (
        stream: string,
        events: readonly NewEvent[],
        expected: ExpectedRevision,
      ): Promise<AppendResult> => {
        this.attempts.push({ ids: events.map((e) => e.id), expected });
        const result = await this.inner.append(stream, events, expected);
        if (this.lose > 0) {
          this.lose -= 1;
          throw new StoreUnavailableError({ reason: "connection lost before the acknowledgement" });
        }
        return result;
      },
    });
  }
}

describe("the actor host under store trouble", () => {
  it("re-appends the very same events after a lost acknowledgement: reported as done, stored once", async () => {
    const flaky = new LostAcknowledgements(sqlite(), 2);
    const clock = new ManualClock();
    const actor = nodeActor("n1", flaky.asStore(), clock);
    const result = await clock.drive(actor.execute(register("n1"), ctx));
    expect(result.events.map((e) => e.type)).toEqual(["NodeRegistered"]);
    expect(flaky.attempts).toHaveLength(3);
    expect(new Set(flaky.attempts.map((a) => JSON.stringify(a))).size).toBe(1); // same ids, same expected revision
    expect(flaky.attempts[0]!.expected).toBe("no_stream");
    const stored = await flaky.inner.readStream("node-n1");
    expect(stored.map((e) => [e.id, e.type])).toEqual([[flaky.attempts[0]!.ids[0], "NodeRegistered"]]);
    expect(result.position).toBe(stored[0]!.position);
    expect(actor.currentRevision).toBe(0);
    // The actor moved on: its next command appends after it.
    await actor.execute({ type: "Approve" }, ctx);
    expect((await flaky.inner.readStream("node-n1")).map((e) => e.type)).toEqual(["NodeRegistered", "NodeApproved"]);
  });

  it("gives up after a bounded number of retries and reports Unavailable with a retry hint", async () => {
    const store = sqlite();
    const clock = new ManualClock();
    const actor = nodeActor("n1", store, clock);
    await actor.execute(register("n1"), ctx);
    await store.close(); // a real store that can no longer be written
    const started = clock.now();
    const error = await clock.drive(
      actor.execute({ type: "Approve" }, ctx).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(clock.now() - started).toBeGreaterThanOrEqual(1300); // 100 + 300 + 900 ms of pauses, on the actor's clock
    expect(asShoalError(error)).toMatchObject({
      kind: "Unavailable",
      retryAfterSeconds: 5,
      message: expect.stringMatching(/^event store unavailable: /),
    });
    expect(actor.currentRevision).toBe(0);
    expect(actor.state.membership).toBe("PENDING");
  });

  it("waits out each pause before a re-append as a deadline of the host's heap, and its host's stop cuts it short", async () => {
    const flaky = new LostAcknowledgements(sqlite(), 3);
    const clock = new ManualClock();
    const deadlines = new DeadlineScheduler(clock);
    const stopping = new AbortController();
    const actor = new EntityActor(nodeKind, "n1", {
      store: flaky.asStore(),
      clock,
      deadlines,
      newEventId: randomUUID,
      stopping: stopping.signal,
    });
    const t0 = clock.now();
    const registering = actor.execute(register("n1"), ctx);
    await settle();
    expect(deadlines.at("re-append/node-n1")).toBe(t0 + 100);
    await clock.advance(100);
    expect(flaky.attempts).toHaveLength(2);
    expect(deadlines.at("re-append/node-n1")).toBe(t0 + 400);
    // The host stops: the caller is answered now, not after the rest of the pauses.
    stopping.abort();
    const result = await registering;
    expect(clock.now()).toBe(t0 + 100);
    expect(flaky.attempts).toHaveLength(4);
    expect(result.events.map((e) => e.type)).toEqual(["NodeRegistered"]);
    expect(deadlines.size).toBe(0);
  });

  it("refuses to store an event its schema rejects: Internal, nothing written", async () => {
    const store = sqlite();
    const actor = nodeActor("bad.id", store, new ManualClock());
    const error = await actor.execute(register("bad.id"), ctx).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ShoalError);
    expect(error).toMatchObject({
      kind: "Internal",
      message: expect.stringMatching(/^refusing to store an invalid NodeRegistered \(data\):[\s\S]*a node id is/),
    });
    expect(await store.readAll()).toEqual([]);
    expect(actor.currentRevision).toBe(-1);
  });
});
