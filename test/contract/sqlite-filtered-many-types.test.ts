import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventFilter, NewEvent } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { expectPagesAsNaive } from "../support/expect-pages-as-naive.ts";

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const START = Date.UTC(2026, 2, 1);
const TYPES = Array.from({ length: 40 }, (_, k) => `Type${k}`);
const ACTORS = [
  { type: "node", id: "n1" },
  { type: "system", id: "node-manager" },
];

const event = (type: string, i: number): NewEvent => ({
  id: randomUUID(),
  type,
  data: { i },
  metadata: { time: new Date(START + i * 1000).toISOString(), actor: ACTORS[i % 2] },
});

/**
 * Many types alone (as the feed's default page asks) first read the rows after the cursor from the table and
 * only then their index ranges, from where that read stopped: pages must come out the same as the naive filter
 * whether the types are most rows, few (a long stretch of others past the first rows read), or none at the end.
 */
describe("SQLite filtered reads of many types alone", () => {
  it("equal the naive filter over dense and sparse stretches, paged to the end", async () => {
    const store = new SqliteEventStore(join(tempDir("shoal-many-types-"), "events.db"));
    opened.push(store);
    let i = 0;
    const stretch = async (stream: string, n: number, type: (k: number) => string) => {
      for (let k = 0; k < n; k += 20)
        await store.append(
          stream,
          Array.from({ length: Math.min(20, n - k) }, (_, j) => event(type(k + j), i++)),
          "any",
        );
    };
    await stretch("node-a", 300, (k) => TYPES[k % TYPES.length] as string); // most rows are asked for
    await stretch("workflow-jobs", 500, () => "WorkflowStepRecorded"); // none are, far past a page's window
    await stretch("node-b", 200, (k) => (k % 7 === 0 ? (TYPES[k % TYPES.length] as string) : "Other")); // a few
    await stretch("workflow-jobs", 150, () => "WorkflowStepRecorded"); // none, up to the end
    const head = await store.headPosition();
    const middle = START + 600_000;
    const filters: EventFilter[] = [
      { types: TYPES },
      { types: [...TYPES].reverse().concat(TYPES.slice(0, 3)) }, // order and repeats change nothing
      { types: TYPES, since: middle, until: middle + 250_000 },
      { types: TYPES, since: START + 10_000 },
    ];
    await expectPagesAsNaive(store, filters, [
      [0, 3],
      [0, 25],
      [0, 1000],
      [290, 10],
      [head - 400, 7],
    ]);
  });
});
