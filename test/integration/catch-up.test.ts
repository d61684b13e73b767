import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { catchUp } from "../../src/projections/catch-up.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { waitFor } from "../support/shoal-process.ts";

const STALL_MS = 1_000;

/** A read model whose every batch waits for the test to let it through. */
class GatedLane {
  readonly name = "gated";
  folded = 0;
  private opened = 0;
  private readonly waiting: (() => void)[] = [];

  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    if (this.opened <= 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.opened--;
    this.folded += batch.length;
  }

  open(batches: number): void {
    this.opened += batches;
    for (const resolve of this.waiting.splice(0, batches)) resolve();
  }
}

const stores: SqliteEventStore[] = [];
const hosts: ProcessorHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
  for (const s of stores.splice(0)) await s.close();
});

async function laneBehind(events: number) {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  stores.push(store);
  let head = 0;
  for (let i = 0; i < events; i++) {
    const time = new Date().toISOString();
    head = (
      await store.append(`tick-${i}`, [{ id: randomUUID(), type: "Ticked", data: {}, metadata: { time } }], "no_stream")
    ).position;
  }
  const clock = new ManualClock();
  const host = new ProcessorHost({
    store,
    logger: silentLogger,
    clock,
    deadlines: new DeadlineScheduler(clock),
    batchSize: 1,
  });
  hosts.push(host);
  const gated = new GatedLane();
  const lane = host.add(gated);
  await host.start();
  return { clock, gated, lane, head };
}

describe("catchUp", () => {
  it("waits as long as the read model keeps folding, however long that is in all", async () => {
    const { clock, gated, lane, head } = await laneBehind(4);
    let done = false;
    const caughtUp = catchUp(lane, head, STALL_MS).then(() => (done = true));
    // Each stall bound passes with one more event folded: longer than one bound in all, never stuck for one.
    for (let folded = 1; folded <= 3; folded++) {
      gated.open(1);
      await waitFor(
        async () => gated.folded === folded,
        5_000,
        () => `${folded} folded`,
      );
      await clock.advance(STALL_MS);
      expect(done).toBe(false);
    }
    gated.open(1);
    await caughtUp;
    expect(lane.position).toBe(head);
  });

  it("stops once the read model folds nothing for the stall bound", async () => {
    const { clock, gated, lane, head } = await laneBehind(3);
    gated.open(1);
    await waitFor(
      async () => gated.folded === 1,
      5_000,
      () => "one folded",
    );
    const caughtUp = catchUp(lane, head, STALL_MS);
    const outcome = caughtUp.then(
      () => "caught up",
      (err: unknown) => String(err),
    );
    await clock.advance(STALL_MS);
    expect(await outcome).toMatch(/gated/);
    expect(lane.position).toBeLessThan(head);
    // The host's stop waits for the batch in hand.
    gated.open(3);
  });
});
