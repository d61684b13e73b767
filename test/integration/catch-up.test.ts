import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { CatchUp } from "../../src/projections/catch-up.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { waitFor } from "../support/shoal-process.ts";

const STALL_MS = 1_000;
const MESSAGE = "recovering ticks: replaying events";

/** A read model whose every batch waits for the test to let it through, or to make it fail. */
class GatedLane {
  readonly name = "gated";
  folded = 0;
  failures = 0;
  private free = false;
  private readonly permits: (Error | undefined)[] = [];
  private readonly waiting: (() => void)[] = [];

  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    if (!this.free && this.permits.length === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const failure = this.permits.shift();
    if (failure) {
      this.failures++;
      throw failure;
    }
    this.folded += batch.length;
  }

  open(batches: number): void {
    for (let i = 0; i < batches; i++) this.permit(undefined);
  }

  fail(err: Error): void {
    this.permit(err);
  }

  /** Every batch from now on folds (the host's stop waits for the batch in hand). */
  release(): void {
    this.free = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  private permit(failure: Error | undefined): void {
    this.permits.push(failure);
    this.waiting.shift()?.();
  }
}

const opened: { gated: GatedLane; host: ProcessorHost; store: SqliteEventStore }[] = [];
afterEach(async () => {
  for (const { gated, host, store } of opened.splice(0)) {
    gated.release();
    await host.stop();
    await store.close();
  }
});

async function tick(store: SqliteEventStore): Promise<number> {
  const event = { id: randomUUID(), type: "Ticked", data: {}, metadata: { time: new Date().toISOString() } };
  return (await store.append(`tick-${randomUUID()}`, [event], "no_stream")).position;
}

/** A store of `events` events, and a gated read model on a host of one event per batch, watched by a catch-up. */
async function laneBehind(events: number) {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  let head = 0;
  for (let i = 0; i < events; i++) head = await tick(store);
  const clock = new ManualClock();
  const deadlines = new DeadlineScheduler(clock);
  const host = new ProcessorHost({ store, logger: silentLogger, clock, deadlines, batchSize: 1 });
  const gated = new GatedLane();
  opened.push({ gated, host, store });
  const { logger, messages } = capturedLogger();
  const catchUp = new CatchUp({ logger, clock, head, message: MESSAGE, stallMs: STALL_MS });
  const lane = catchUp.follow(host, gated);
  return { store, clock, gated, catchUp, lane, head, messages, start: () => host.start() };
}

const folded = (lane: { readonly position: number }, position: number) =>
  waitFor(
    () => lane.position === position,
    5_000,
    () => `folded up to ${position} (at ${lane.position})`,
  );

describe("a read model's catch-up at start-up", () => {
  it("waits as long as the read model keeps folding, however long that is in all", async () => {
    const { clock, gated, catchUp, lane, head, start } = await laneBehind(4);
    await start();
    let done = false;
    const caughtUp = catchUp.until().then(() => (done = true));
    // Each stall bound passes with one more event folded: longer than one bound in all, never stuck for one.
    for (let n = 1; n <= 3; n++) {
      gated.open(1);
      await waitFor(
        () => gated.folded === n,
        5_000,
        () => `${n} folded`,
      );
      await clock.advance(STALL_MS);
      expect(done).toBe(false);
    }
    gated.open(1);
    await caughtUp;
    expect(lane.position).toBe(head);
  });

  it("stops once the read model folds nothing for the stall bound, with the lane's own error", async () => {
    const { clock, gated, catchUp, lane, head, start } = await laneBehind(3);
    await start();
    gated.open(1);
    await waitFor(
      () => gated.folded === 1,
      5_000,
      () => "one folded",
    );
    const outcome = catchUp.until().then(
      () => "caught up",
      (err: unknown) => String(err),
    );
    await clock.advance(STALL_MS);
    expect(await outcome).toMatch(/processor gated did not reach position/);
    expect(lane.position).toBeLessThan(head);
  });

  it("ends the wait at once with a batch the read model failed before the head, naming it: no retry, no stall", async () => {
    const { clock, gated, catchUp, lane, head, start } = await laneBehind(3);
    await start();
    const startedAt = clock.now();
    gated.open(1);
    // Failed before anyone waits: no unhandled rejection, the wait that follows gets it.
    gated.fail(new Error("stream tick-x@0 (position 2): its data is not JSON"));
    await expect(catchUp.until()).rejects.toThrow("stream tick-x@0 (position 2)");
    expect(lane.position).toBeLessThan(head);
    // The clock never moved: neither a retry's pause nor the stall bound passed.
    expect(clock.now()).toBe(startedAt);
  });

  it("leaves a failure after the head to the lane: it delivers the batch again, the catch-up is done", async () => {
    const { store, gated, catchUp, lane, head, start } = await laneBehind(2);
    await start();
    gated.open(2);
    await catchUp.until();
    await tick(store);
    gated.fail(new Error("a live event the read model cannot fold yet"));
    await waitFor(
      () => gated.failures === 1,
      5_000,
      () => "the live batch failed",
    );
    expect(lane.position).toBe(head);
    await expect(catchUp.until()).resolves.toBeUndefined();
  });

  it("logs its progress about once a second until a batch reaches the head, then nothing; its time from the start", async () => {
    const { store, clock, gated, catchUp, lane, head, messages, start } = await laneBehind(5);
    // Built before the processors start: its time counts from their start.
    await clock.advance(10_000);
    await start();
    gated.open(1);
    await folded(lane, head - 4);
    await clock.advance(999);
    gated.open(1);
    await folded(lane, head - 3);
    expect(messages(MESSAGE)).toHaveLength(0);
    await clock.advance(1);
    gated.open(1);
    await folded(lane, head - 2);
    expect(messages(MESSAGE)).toEqual([expect.objectContaining({ events: 3, position: head - 2, head, perSecond: 3 })]);
    await clock.advance(1_000);
    gated.open(2);
    await catchUp.until();
    await tick(store);
    await clock.advance(5_000);
    gated.open(1);
    await folded(lane, head + 1);
    expect(messages(MESSAGE)).toHaveLength(2);
    expect(catchUp.elapsed().ms).toBe(7_000);
  });
});
