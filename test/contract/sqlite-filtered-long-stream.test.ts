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

const event = (type: string, i: number, actor: { type: string; id: string }): NewEvent => ({
  id: randomUUID(),
  type,
  data: { i },
  metadata: { time: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(), actor },
});

/**
 * A stream far longer than a type's or an actor's rows, and the same type and actor in other streams: a page
 * for the stream with that type or actor is read from whichever side holds fewer rows, and from either side it
 * must hold the stream's rows alone, all of them, in store order.
 */
describe("SQLite filtered reads of one long stream with a rare type or actor", () => {
  it("equal the naive filter whichever side is smaller, paged to the end", async () => {
    const store = new SqliteEventStore(join(tempDir("shoal-long-stream-"), "events.db"));
    opened.push(store);
    const node = { type: "node", id: "long" };
    const alice = { type: "operator", id: "alice" };
    let i = 0;
    for (let batch = 0; batch < 12; batch++) {
      // 50 of the long stream's own events, then a few elsewhere: the rare type and actor in other streams too.
      const own = Array.from({ length: 50 }, (_, k) =>
        k === 25 ? event("NodeCordoned", i++, alice) : event("NodeBecameHealthy", i++, node),
      );
      await store.append("node-long", own, "any");
      await store.append(`node-other${batch}`, [event("NodeCordoned", i++, alice)], "any");
      await store.append(`node-other${batch}`, [event("NodeBecameHealthy", i++, node)], "any");
    }
    const middle = Math.floor((await store.headPosition()) / 2);
    const filters: EventFilter[] = [
      { streams: ["node-long"], types: ["NodeCordoned"] }, // the type's index side is smaller
      { streams: ["node-long"], actors: [{ type: "operator", id: "alice" }] }, // the actor's index side is smaller
      { streams: ["node-long"], types: ["NodeBecameHealthy"] }, // the stream is the smaller side
      { streams: ["node-long", "node-other3"], types: ["NodeCordoned"] },
      { streams: ["node-other5"], actors: [{ type: "operator" }], types: ["NodeCordoned"] },
    ];
    await expectPagesAsNaive(store, filters, [
      [0, 3],
      [0, 1000],
      [middle, 4],
    ]);
  });
});
