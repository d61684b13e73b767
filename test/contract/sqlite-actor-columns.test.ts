import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventFilter, NewEvent } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { naiveMatch, readAllFilteredPages } from "../support/skewed-log.ts";

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

class Stamped {
  constructor(readonly time: string) {}
  get actor() {
    return { type: "operator", id: "from-a-getter" };
  }
}

/**
 * Metadata as appenders may hand it over: plain, with no actor, with an actor that is not two
 * strings, and objects whose JSON is not their own properties (a toJSON, a getter, a class).
 */
function metadataCases(): Readonly<Record<string, unknown>>[] {
  const time = "2026-03-01T00:00:00.000Z";
  const getter = { time };
  Object.defineProperty(getter, "actor", { enumerable: true, get: () => ({ type: "system", id: "via-getter" }) });
  const hidden = { time };
  Object.defineProperty(hidden, "actor", { enumerable: false, value: { type: "operator", id: "hidden" } });
  return [
    { time, actor: { type: "operator", id: "alice" } },
    { time, actor: { type: "node", id: "n1" } },
    { time },
    { time, actor: null },
    { time, actor: "operator:alice" },
    { time, actor: ["operator", "alice"] },
    { time, actor: { type: "operator" } },
    { time, actor: { id: "alice" } },
    { time, actor: { type: 5, id: 7 } },
    { time, actor: { type: "node", id: 7 } },
    { time, actor: { type: true, id: null } },
    { time, actor: { type: "operator", id: "bob", toJSON: () => ({ type: "workflow", id: "jobs" }) } },
    { time, actor: { type: "operator", id: "carol" }, toJSON: () => ({ actor: { type: "system", id: "json" } }) },
    { time, actor: { type: new String("operator"), id: "dave" } },
    getter,
    hidden,
    new Stamped(time) as unknown as Readonly<Record<string, unknown>>,
  ];
}

const FILTERS: EventFilter[] = [
  { actors: [{ type: "operator" }] },
  { actors: [{ type: "operator", id: "alice" }] },
  { actors: [{ type: "node", id: "n1" }] },
  { actors: [{ type: "node", id: "7" }] },
  { actors: [{ type: "node" }] },
  { actors: [{ type: "5" }] },
  { actors: [{ type: "1" }] },
  { actors: [{ type: "workflow", id: "jobs" }] },
  { actors: [{ type: "system" }] },
  {
    actors: [
      { type: "operator", id: "bob" },
      { type: "operator", id: "carol" },
    ],
  },
  { actors: [{ type: "operator", id: "dave" }] },
  { actors: [{ type: "operator", id: "hidden" }] },
  { types: ["NodeApproved"] },
  { types: ["NodeApproved"], actors: [{ type: "operator" }] },
];

describe.each([
  ["on the event loop", false],
  ["on a writer thread", true],
])("SQLite actor columns with commits %s", (_, writerThread) => {
  it("hold the actor that the stored metadata text names, whatever object the metadata was", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = new SqliteEventStore(file, { writerThread });
    opened.push(store);
    const cases = metadataCases();
    const events: NewEvent[] = cases.map((metadata) => ({
      id: randomUUID(),
      type: "NodeApproved",
      data: {},
      metadata,
    }));
    // One append of many, and appends of one event (the insert path without a savepoint).
    await store.append("node-a", events.slice(0, 8), "no_stream");
    await Promise.all(events.slice(8).map((e, i) => store.append(`node-b${i}`, [e], "no_stream")));

    const all = await store.readAll();
    expect(all).toHaveLength(cases.length);
    const through = await store.headPosition();
    for (const filter of FILTERS) {
      const expected = all.filter((e) => naiveMatch(e, filter)).map((e) => e.id);
      const { events: read } = await readAllFilteredPages(store, filter, { through, limit: 4 });
      expect(
        read.map((e) => e.id),
        JSON.stringify(filter),
      ).toEqual(expected);
    }
    // The columns themselves, against the stored text read the way a filter in memory reads it.
    const db = new Database(file, { readonly: true });
    const rows = db.prepare("SELECT metadata, actor_type, actor_id FROM events ORDER BY position").all() as {
      metadata: string;
      actor_type: string | null;
      actor_id: string | null;
    }[];
    db.close();
    for (const row of rows) {
      const actor = (JSON.parse(row.metadata) as { actor?: { type?: unknown; id?: unknown } }).actor;
      const text = (v: unknown) => (typeof v === "string" ? v : null);
      const object = typeof actor === "object" && actor !== null && !Array.isArray(actor);
      expect([row.actor_type, row.actor_id], row.metadata).toEqual(
        object ? [text(actor.type), text(actor.id)] : [null, null],
      );
    }
  });
});

describe("SQLite actor columns in the file", () => {
  it("follow metadata edited in the file, and a row edited to text that is not JSON names no actor", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = new SqliteEventStore(file);
    opened.push(store);
    const metadata = (id: string) => ({ time: "2026-03-01T00:00:00.000Z", actor: { type: "operator", id } });
    await store.append(
      "node-a",
      ["alice", "alice", "alice"].map((id) => ({
        id: randomUUID(),
        type: "NodeCordoned",
        data: {},
        metadata: metadata(id),
      })),
      "no_stream",
    );
    const db = new Database(file);
    db.prepare("UPDATE events SET metadata = ? WHERE position = 1").run(JSON.stringify(metadata("mallory")));
    db.prepare("UPDATE events SET metadata = 'not json' WHERE position = 2").run();
    db.close();

    const by = async (id: string) =>
      (await store.readFiltered({ actors: [{ type: "operator", id }] }, { maxCount: 10 })).events.map(
        (e) => e.position,
      );
    expect(await by("mallory")).toEqual([1]);
    expect(await by("alice")).toEqual([3]);
    const byType = await store.readFiltered({ actors: [{ type: "operator" }] }, { maxCount: 10 });
    expect(byType.events.map((e) => e.position)).toEqual([1, 3]);
  });
});
