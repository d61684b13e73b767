import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventFilter, NewEvent } from "../../src/events/store/event-store.ts";
import { expectPagesAsNaive } from "../support/expect-pages-as-naive.ts";
import { naiveMatch, readAllFilteredPages } from "../support/skewed-log.ts";
import { tempDir } from "../support/fixtures.ts";
import { seededRandom } from "../support/seeded-random.ts";

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

type Actor = { type: string; id?: string } | undefined;

const event = (type: string, i: number, actor: Actor): NewEvent => ({
  id: randomUUID(),
  type,
  data: { i },
  metadata: { time: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(), ...(actor ? { actor } : {}) },
});

const NODE_TYPES = ["NodeRegistered", "NodeInfoUpdated", "NodeBecameHealthy", "NodeCordoned"];
const EXECUTION_TYPES = ["ExecutionBidAccepted", "ExecutionStarted", "ExecutionCompleted"];

/**
 * Nodes acting on their own streams (`node-<id>`, rows the actor index leaves out) and on execution
 * streams (rows it holds), interleaved with the node manager, operators, events naming no actor, and
 * an actor whose type and id spell a node's stream another way (`node-n` and `1`: `node-n-1`).
 */
async function ownStreamLog(store: SqliteEventStore): Promise<void> {
  const random = seededRandom(15);
  const nodes = ["n-1", "n-2", "n3"];
  const executions = Array.from({ length: 6 }, (_, k) => `execution-x${k}`);
  let i = 0;
  for (let tick = 0; tick < 160; tick++) {
    const node = random.pick(nodes);
    const r = random.next();
    const byNode = { type: "node", id: node };
    const other: Actor =
      r < 0.4
        ? { type: "system", id: "node-manager" }
        : r < 0.5
          ? { type: "operator", id: random.pick(["alice", "bob"]) }
          : r < 0.6
            ? { type: "node-n", id: "1" }
            : r < 0.7
              ? { type: "node" }
              : undefined;
    const own = Array.from({ length: 1 + random.int(3) }, () =>
      event(random.pick(NODE_TYPES), i++, random.next() < 0.6 ? byNode : other),
    );
    await store.append(`node-${node}`, own, "any");
    if (random.next() < 0.5) {
      const execution = random.pick(executions);
      const actor = random.next() < 0.7 ? byNode : { type: "system", id: "workflow-jobs" };
      await store.append(execution, [event(random.pick(EXECUTION_TYPES), i++, actor)], "any");
    }
  }
}

describe("SQLite filtered reads of a node that acts on its own stream and on others", () => {
  it("leave out of the actor index the rows of an actor on its own stream, and those naming no actor id", async () => {
    const file = join(tempDir("shoal-own-stream-"), "events.db");
    const store = new SqliteEventStore(file);
    await ownStreamLog(store);
    await store.close();
    const db = new Database(file);
    try {
      // ANALYZE counts the entries an index holds (the first number of its stat).
      db.exec("ANALYZE events_by_actor");
      const stat = db.prepare("SELECT stat FROM sqlite_stat1 WHERE idx = 'events_by_actor'").pluck().get() as string;
      const rows = db.prepare("SELECT stream, actor_type, actor_id FROM events").all() as {
        stream: string;
        actor_type: string | null;
        actor_id: string | null;
      }[];
      const own = rows.filter((r) => r.stream === `${r.actor_type}-${r.actor_id}`).length;
      const elsewhere = rows.filter((r) => r.actor_id !== null && r.stream !== `${r.actor_type}-${r.actor_id}`).length;
      expect(own).toBeGreaterThan(0);
      expect(Number(stat.split(" ")[0])).toBe(elsewhere);
    } finally {
      db.close();
    }
  });

  it("equal the naive filter for the actor alone, with types, with entities and among other actors, paged", async () => {
    const store = new SqliteEventStore(join(tempDir("shoal-own-stream-"), "events.db"));
    opened.push(store);
    await ownStreamLog(store);
    const node1 = { type: "node", id: "n-1" };
    const filters: EventFilter[] = [
      { actors: [node1] },
      { actors: [{ type: "node", id: "n3" }] },
      { actors: [node1], types: ["NodeCordoned"] },
      { actors: [node1], types: ["NodeInfoUpdated", "ExecutionStarted"] },
      { actors: [node1], streams: ["node-n-1"] },
      { actors: [node1], streams: ["node-n-1"], types: ["NodeRegistered"] },
      { actors: [node1], streams: ["execution-x2"] },
      { actors: [node1], streams: ["node-n-1", "execution-x0", "execution-x4", "node-n-2"] },
      { actors: [node1, { type: "node", id: "n-2" }] },
      {
        actors: [node1, { type: "operator", id: "alice" }, { type: "system" }],
        types: ["NodeCordoned", "NodeBecameHealthy"],
      },
      { actors: [node1, { type: "node" }] },
      { actors: [node1, { type: "node-n", id: "1" }] },
      { actors: [{ type: "node-n", id: "1" }] },
      { actors: [{ type: "system", id: "workflow-jobs" }] },
      { actors: [node1, { type: "node", id: "n3" }], streams: ["node-n3", "node-n-1", "execution-x1"] },
    ];
    const middle = Math.floor((await store.headPosition()) / 2);
    await expectPagesAsNaive(store, filters, [
      [0, 1],
      [0, 4],
      [0, 1000],
      [middle, 3],
    ]);
  });

  it("end a page short where an actor's own stream was read up to its budget, and read on from there", async () => {
    const store = new SqliteEventStore(join(tempDir("shoal-own-stream-"), "events.db"));
    opened.push(store);
    await ownStreamLog(store);
    const all = await store.readAll({ after: 0, maxCount: 100_000 });
    const through = await store.headPosition();
    const filters: EventFilter[] = [
      { actors: [{ type: "node", id: "n-1" }] },
      { actors: [{ type: "node", id: "n-1" }], types: ["NodeCordoned", "ExecutionStarted"] },
      { actors: [{ type: "node", id: "n3" }, { type: "operator" }] },
    ];
    for (const filter of filters) {
      const { events, pages } = await readAllFilteredPages(store, filter, { through, limit: 5, scanBudget: 3 });
      expect(
        events.map((e) => e.position),
        JSON.stringify(filter),
      ).toEqual(all.filter((e) => naiveMatch(e, filter)).map((e) => e.position));
      // Pages ended by the budget: short of both the page and the end.
      expect(pages.some((p) => p.events.length < 5 && p.scannedThrough < through)).toBe(true);
    }
    // Without a budget named, the default covers these short streams: every page but the last is full.
    const { pages } = await readAllFilteredPages(store, filters[0]!, { through, limit: 5 });
    expect(pages.slice(0, -1).every((p) => p.events.length === 5)).toBe(true);
  });
});
