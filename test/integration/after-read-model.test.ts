import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { afterReadModel } from "../../src/workflows/after-read-model.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";

/** A workflow wrapped by afterReadModel, on a real processor host over a SQLite store, behind a held read model. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const tick = (i: number) => ({
  id: randomUUID(),
  type: "Ticked",
  data: { i },
  metadata: { time: "2026-11-29T02:00:00Z" },
});

describe("afterReadModel", () => {
  it("hands a batch to the workflow only once the read model has folded it, and reads what it folded", async () => {
    const store = new SqliteEventStore(join(tempDir("shoal-after-read-model-"), "shoal.db"));
    cleanups.push(() => store.close());
    const host = new ProcessorHost({ store, logger: silentLogger });
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const folded: number[] = [];
    const readModel = host.add({
      name: "read-model",
      handle: async (batch) => {
        await gate;
        for (const e of batch) folded.push(e.recorded.position);
      },
    });
    /** What the read model had folded when the workflow saw each event. */
    const seen: { position: number; folded: number }[] = [];
    host.add(
      afterReadModel(
        {
          name: "workflow",
          handle: (batch) => {
            for (const e of batch) seen.push({ position: e.recorded.position, folded: folded.at(-1) ?? 0 });
          },
        },
        readModel,
      ),
    );
    await host.start();
    // A failed assertion leaves the read model held: opened first, so the host can stop.
    cleanups.push(
      () => host.stop(),
      () => open(),
    );
    const { position } = await store.append("tick-1", [tick(1), tick(2), tick(3)], "no_stream");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen).toEqual([]);
    open();
    await readModel.waitFor(position);
    const until = Date.now() + 5_000;
    while (seen.length < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.map((s) => s.position)).toEqual(folded);
    for (const s of seen) expect(s.folded).toBeGreaterThanOrEqual(s.position);
  });
});
