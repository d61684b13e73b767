import { randomUUID } from "node:crypto";
import type { KurrentDBClient } from "@kurrent/kurrentdb-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";

const EVENTS = 40;

let standIn: KurrentStandIn;
let store: EsdbEventStore;
/** Events the server sent for the store's reads of $all since the last reset. */
let sent = 0;

beforeAll(async () => {
  standIn = await KurrentStandIn.start();
  store = await EsdbEventStore.open(standIn.url);
  for (let i = 0; i < EVENTS; i++)
    await store.append(
      `job-${i}`,
      [{ id: randomUUID(), type: "JobSubmitted", data: { i }, metadata: { time: "2026-01-01T00:00:00Z" } }],
      "no_stream",
    );
  // What crosses the wire is what the client's read yields: counted at the client the adapter holds.
  const client = (store as unknown as { client: KurrentDBClient }).client;
  const readAll = client.readAll.bind(client);
  client.readAll = ((options) =>
    (async function* () {
      for await (const event of readAll(options)) {
        sent++;
        yield event;
      }
    })()) as KurrentDBClient["readAll"];
}, 60_000);

afterAll(async () => {
  await store.close();
  await standIn.close();
});

/** Every event asked for is sent and decoded, whether the caller reads it or not (reads are drained to their end). */
describe("KurrentDB: a short read of $all asks the server for what it returns", () => {
  it("a one-event read (the store's health probe, GET /api/v1/agent/alive) has one event sent, not a page", async () => {
    sent = 0;
    const [first] = await store.readAll({ maxCount: 1 });
    expect(first?.data).toEqual({ i: 0 });
    expect(sent).toBe(1);
  });

  it("a read after a position has the wanted events sent, and the one at the position it repeats", async () => {
    const all = await store.readAll();
    expect(all).toHaveLength(EVENTS);
    sent = 0;
    const page = await store.readAll({ after: all[9]!.position, maxCount: 5 });
    expect(page.map((e) => e.data)).toEqual([10, 11, 12, 13, 14].map((i) => ({ i })));
    expect(sent).toBe(6);
  });

  it("a read with no bound still reads every event, in order", async () => {
    sent = 0;
    const all = await store.readAll({ after: 0 });
    expect(all.map((e) => e.data)).toEqual(Array.from({ length: EVENTS }, (_, i) => ({ i })));
    expect(sent).toBe(EVENTS);
  });
});
