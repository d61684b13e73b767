import { closeSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { CorruptEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { tempDir } from "../support/fixtures.ts";

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** Read ahead on the reader thread whatever the replay's length, or never. */
const AHEAD = { readAheadFrom: 0 };
const INLINE = { readAheadFrom: Number.POSITIVE_INFINITY };

function open(file: string, options: { readAheadFrom: number }): SqliteEventStore {
  const s = new SqliteEventStore(file, options);
  opened.push(s);
  return s;
}

const ev = (i: number, filler = ""): NewEvent => ({
  id: `e-${i}`,
  type: i % 3 === 0 ? "Big" : "Small",
  data: { i, text: `é ✓ ${i}${filler}` },
  metadata: {
    time: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
    actor: { type: "system", id: "t" },
    schemaVersion: 1 + (i % 2),
  },
});

/**
 * `streams` streams, `events` events appended in rounds of one append per stream (so streams interleave), a checkpoint
 * saved between.
 */
async function fill(file: string, events: number, streams: number, filler = ""): Promise<void> {
  const s = new SqliteEventStore(file);
  const revisions = new Array<number>(streams).fill(-1);
  for (let i = 0; i < events;) {
    const appends: Promise<unknown>[] = [];
    for (let k = 0; k < streams && i < events; k++, i++) {
      appends.push(
        s.append(`thing-${k}`, [ev(i, filler)], revisions[k] === -1 ? "no_stream" : (revisions[k] as number)),
      );
      revisions[k] = (revisions[k] as number) + 1;
    }
    if (i % (streams * 7) === 0) appends.push(s.save("some-processor", i));
    await Promise.all(appends);
  }
  await s.close();
}

/** Everything a reader can see of an event (data and metadata parsed, or the error reading them). */
function seen(e: RecordedEvent): unknown[] {
  const read = (f: () => unknown) => {
    try {
      return f();
    } catch (err) {
      return `${(err as Error).name}: ${(err as Error).message}`;
    }
  };
  return [
    e.position,
    e.id,
    e.stream,
    e.revision,
    e.type,
    e.time,
    read(() => e.data),
    read(() => e.metadata),
    read(() => e.schemaVersion ?? e.metadata.schemaVersion),
  ];
}

async function pages(store: SqliteEventStore, after: number, pageSize: number): Promise<RecordedEvent[][]> {
  const out: RecordedEvent[][] = [];
  for await (const page of store.readAllPages({ after, pageSize })) out.push([...page]);
  return out;
}

describe("SQLite readAllPages read ahead on a reader thread", () => {
  it("yields every event after the position exactly once, in global order, as readAll and the one-thread replay do", async () => {
    const file = join(tempDir(), "shoal.db");
    await fill(file, 5_000, 37);
    const inline = open(file, INLINE);
    const ahead = open(file, AHEAD);
    const all = (await inline.readAll()).map(seen);
    expect(all.length).toBe(5_000);
    for (const [after, pageSize] of [
      [0, 64],
      [0, 1],
      [0, 5_000],
      [0, 625], // the last page is full: the read after it finds nothing, and no empty page is yielded
      [1_234, 100],
      [4_999, 10],
      [5_000, 10],
    ] as const) {
      const got = await pages(ahead, after, pageSize);
      expect(got.every((p) => p.length > 0 && p.length <= pageSize)).toBe(true);
      const expected = all.filter((e) => (e[0] as number) > after);
      expect(got.flat().map(seen)).toEqual(expected);
      expect((await pages(inline, after, pageSize)).flat().map(seen)).toEqual(expected);
    }
  });

  it("sees events appended after it was opened, and an empty store", async () => {
    const file = join(tempDir(), "shoal.db");
    const s = open(file, AHEAD);
    expect(await pages(s, 0, 10)).toEqual([]);
    await s.append("thing-a", [ev(1), ev(2), ev(3)], "no_stream");
    expect((await pages(s, 0, 2)).map((p) => p.map((e) => e.id))).toEqual([["e-1", "e-2"], ["e-3"]]);
  });

  it("reads the schema version of events stored without the column from their metadata, and leaves metadata that is not JSON to fail where it is read, naming the event", async () => {
    const file = join(tempDir(), "shoal.db");
    await fill(file, 40, 4);
    const db = new Database(file);
    // As an older Shoal (before the column) stored them; then damage of three kinds.
    db.prepare("UPDATE events SET schema_version = NULL WHERE position % 2 = 0").run();
    db.prepare('UPDATE events SET metadata = \'{"time": "x", "schemaV\' WHERE position = 10').run();
    db.prepare(`UPDATE events SET metadata = '{"schemaVersion":"1"}' WHERE position = 12`).run();
    db.prepare(`UPDATE events SET metadata = '[1]' WHERE position = 14`).run();
    db.close();
    const inline = (await open(file, INLINE).readAll()).map(seen);
    const ahead = (await pages(open(file, AHEAD), 0, 7)).flat();
    expect(ahead.map(seen)).toEqual(inline);
    // The version came across without this thread parsing the metadata, where the metadata gives one.
    expect(ahead.find((e) => e.position === 2)!.schemaVersion).toBe(2);
    expect(ahead.find((e) => e.position === 10)!.schemaVersion).toBeUndefined();
    expect(() => ahead.find((e) => e.position === 10)!.metadata).toThrow(CorruptEventError);
    expect(() => ahead.find((e) => e.position === 10)!.metadata).toThrow(
      /^stream thing-1@2 \(position 10\): its metadata is not JSON: /,
    );
  });

  it("stops its reader when the consumer leaves early, and the store reads on", async () => {
    const file = join(tempDir(), "shoal.db");
    await fill(file, 2_000, 10);
    const s = open(file, AHEAD);
    let taken = 0;
    for await (const page of s.readAllPages({ after: 0, pageSize: 50 })) {
      taken += page.length;
      if (taken >= 100) break;
    }
    expect(taken).toBe(100);
    // A consumer that fails mid-replay (a corrupt event in a fold) ends the read the same way.
    await expect(
      (async () => {
        for await (const page of s.readAllPages({ after: 0, pageSize: 50 }))
          if (page[0]!.position > 500) throw new Error("fold failed");
      })(),
    ).rejects.toThrow("fold failed");
    expect((await pages(s, 0, 500)).flat().length).toBe(2_000);
  });

  it("a store its reader thread cannot open fails the replay with StoreUnavailableError naming the file: no page, no hang", async () => {
    const dir = tempDir();
    const file = join(dir, "shoal.db");
    await fill(file, 100, 3);
    const s = open(file, AHEAD);
    // This thread's connection keeps the file open; the reader thread opens it by name.
    renameSync(file, join(dir, "moved.db"));
    const got: number[] = [];
    const replay = (async () => {
      for await (const page of s.readAllPages({ after: 0, pageSize: 10 })) got.push(page.length);
    })();
    await expect(replay).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(replay).rejects.toThrow(`cannot read SQLite store ${file}: it cannot be opened`);
    expect(got).toEqual([]);
    renameSync(join(dir, "moved.db"), file);
  });

  it("a store that is corrupt midway fails the replay where it is, as on one thread: the pages before it, then SQLite's error", async () => {
    const file = join(tempDir(), "shoal.db");
    await fill(file, 3_000, 20, "x".repeat(400));
    // Whole pages of garbage in the middle of the table (4 KiB pages; page 1 holds the schema).
    const size = statSync(file).size;
    const fd = openSync(file, "r+");
    const at = Math.floor(size / 2 / 4096) * 4096;
    writeSync(fd, Buffer.alloc(4 * 4096, 0xa5), 0, 4 * 4096, at);
    closeSync(fd);
    const outcome = async (options: { readAheadFrom: number }) => {
      const s = open(file, options);
      let events = 0;
      try {
        for await (const page of s.readAllPages({ after: 0, pageSize: 100 })) events += page.length;
        return { events, error: undefined };
      } catch (e) {
        return {
          events,
          error: `${(e as Error).name} ${(e as { code?: string }).code ?? ""}: ${(e as Error).message}`,
        };
      }
    };
    const inline = await outcome(INLINE);
    const ahead = await outcome(AHEAD);
    expect(inline.error).toMatch(/SQLITE_CORRUPT|malformed/);
    expect(ahead).toEqual(inline);
    expect(ahead.events).toBeGreaterThan(0);
    expect(ahead.events).toBeLessThan(3_000);
  });

  it("a subscription catches up through the reader thread, then follows live appends: every position once, in order; stopping mid catch-up ends it", async () => {
    const file = join(tempDir(), "shoal.db");
    await fill(file, 3_000, 11);
    const s = open(file, AHEAD);
    const expected = (await s.readAll()).map((e) => e.position);
    const got: number[] = [];
    let live: () => void = () => undefined;
    const liveSeen = new Promise<void>((resolve) => (live = resolve));
    const sub = s.subscribeToAll({ after: 0 }, (e) => {
      got.push(e.position);
      if (e.stream === "thing-live" && e.revision === 1) live();
    });
    await s.append("thing-live", [ev(10_001), ev(10_002)], "no_stream");
    await liveSeen;
    await sub.stop();
    const all = (await s.readAll()).map((e) => e.position);
    expect(all.slice(0, expected.length)).toEqual(expected);
    expect(got).toEqual(all);

    // Stopped while its reader thread is still reading ahead: it ends, and handles nothing more.
    let handled = 0;
    const early = s.subscribeToAll({ after: 0 }, () => {
      handled++;
      // Not awaited here: stop() waits for the handler to return.
      if (handled === 700) void early.stop();
    });
    await early.done;
    expect(handled).toBe(700);
  });
});
