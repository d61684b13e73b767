import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckpointStore, EventStore, NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { WrongExpectedRevisionError } from "../../src/events/store/store-errors.ts";
import {
  appendLog,
  filtersFor,
  LOG_START_MS,
  naiveMatch,
  readAllFilteredPages,
  skewedLog,
} from "../support/skewed-log.ts";

const ev = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { time: "2026-01-01T00:00:00.000Z", actor: { type: "system", id: "test" } },
});

/**
 * One suite, every adapter: the behaviour the actor host and projections rely on. `longTestMs`
 * bounds the two tests that read a 2,500-event log page after page (hundreds of reads): an
 * adapter whose every read is a network round trip needs longer than SQLite.
 */
export function eventStoreContract(
  name: string,
  open: () => Promise<EventStore & CheckpointStore>,
  skipReason?: string,
  longTestMs = 120_000,
  /** How many of the log's events the small pages go through: fewer where each read costs a network round trip. */
  pagedEvents = Infinity,
): void {
  describe.skipIf(skipReason !== undefined)(
    `EventStore contract: ${name}${skipReason ? ` (skipped: ${skipReason})` : ""}`,
    () => {
      let store: EventStore & CheckpointStore;
      // Unique streams per run, so the suite can share a long-lived EventStoreDB.
      const run = randomUUID().slice(0, 8);
      const stream = (s: string) => `test${run}-${s}`;

      beforeAll(async () => {
        store = await open();
      });
      afterAll(async () => {
        await store?.close();
      });

      it("appends to a new stream with no_stream and reads it back in order, 0-based", async () => {
        const s = stream("a");
        const r = await store.append(s, [ev("One", { n: 1 }), ev("Two", { n: 2 })], "no_stream");
        expect(r.nextExpectedRevision).toBe(1);
        expect(r.position).toBeGreaterThan(0);
        const read = await store.readStream(s);
        expect(read.map((e) => [e.type, e.revision, e.data])).toEqual([
          ["One", 0, { n: 1 }],
          ["Two", 1, { n: 2 }],
        ]);
        expect(read[1]!.position).toBe(r.position);
        expect(read[0]!.stream).toBe(s);
        expect(read[0]!.time).toBe("2026-01-01T00:00:00.000Z");
        expect(read[0]!.metadata.actor).toEqual({ type: "system", id: "test" });
      });

      it("enforces the expected revision with a typed error", async () => {
        const s = stream("b");
        await store.append(s, [ev("One")], "no_stream");
        await expect(store.append(s, [ev("Again")], "no_stream")).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        await expect(store.append(s, [ev("Stale")], 5)).rejects.toMatchObject({
          _tag: "WrongExpectedRevision",
          stream: s,
          actual: 0,
        });
        await expect(store.append(stream("missing"), [ev("X")], "stream_exists")).rejects.toMatchObject({ actual: -1 });
        await expect(store.append(stream("missing2"), [ev("X")], 0)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        const ok = await store.append(s, [ev("Two")], 0);
        expect(ok.nextExpectedRevision).toBe(1);
        await store.append(s, [ev("Three")], "any");
        await store.append(s, [ev("Four")], "stream_exists");
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(["One", "Two", "Three", "Four"]);
      });

      it("appends nothing when the expected revision is wrong", async () => {
        const s = stream("c");
        await store.append(s, [ev("One")], "no_stream");
        await expect(store.append(s, [ev("A"), ev("B")], 3)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(s)).toHaveLength(1);
      });

      it("reads a missing stream as empty, and pages with fromRevision/maxCount", async () => {
        expect(await store.readStream(stream("nothing"))).toEqual([]);
        const s = stream("d");
        await store.append(s, [ev("E0"), ev("E1"), ev("E2"), ev("E3")], "no_stream");
        expect((await store.readStream(s, { fromRevision: 1, maxCount: 2 })).map((e) => e.type)).toEqual(["E1", "E2"]);
      });

      it("reads all streams in one global order, exclusively after a position", async () => {
        const a = stream("e1");
        const b = stream("e2");
        const p1 = await store.append(a, [ev("A0")], "no_stream");
        const p2 = await store.append(b, [ev("B0")], "no_stream");
        const p3 = await store.append(a, [ev("A1")], 0);
        expect(p1.position).toBeLessThan(p2.position);
        expect(p2.position).toBeLessThan(p3.position);
        const after = (await store.readAll({ after: p1.position })).filter((e) => e.stream === a || e.stream === b);
        expect(after.map((e) => e.type)).toEqual(["B0", "A1"]);
        const limited = await store.readAll({ after: p1.position, maxCount: 1 });
        expect(limited).toHaveLength(1);
        expect(limited[0]!.position).toBeGreaterThan(p1.position);
      });

      it("subscribes from a position: catch-up first, then live appends, in order", async () => {
        const s = stream("f");
        const start = await store.append(s, [ev("Before")], "no_stream");
        const seen: RecordedEvent[] = [];
        let resolveThree: () => void = () => undefined;
        const three = new Promise<void>((r) => (resolveThree = r));
        const sub = store.subscribeToAll({ after: start.position - 1 }, (e) => {
          if (e.stream !== s) return;
          seen.push(e);
          if (seen.length === 3) resolveThree();
        });
        await store.append(s, [ev("Live1")], 0);
        await store.append(s, [ev("Live2")], 1);
        await three;
        await sub.stop();
        await sub.done;
        expect(seen.map((e) => e.type)).toEqual(["Before", "Live1", "Live2"]);
        expect(seen.map((e) => e.revision)).toEqual([0, 1, 2]);
      });

      it("surfaces a handler error through the subscription's done", async () => {
        const s = stream("g");
        await store.append(s, [ev("Boom")], "no_stream");
        const sub = store.subscribeToAll({}, (e) => {
          if (e.stream === s) throw new Error("handler failed");
        });
        await expect(sub.done).rejects.toThrow("handler failed");
        await sub.stop();
      });

      it("keeps named checkpoints", async () => {
        const name = `cp-${run}`;
        expect(await store.load(name)).toBeUndefined();
        await store.save(name, 42);
        await store.save(name, 43);
        expect(await store.load(name)).toBe(43);
      });

      it("acknowledges a retried append (same ids, same expected revision) again and stores it once", async () => {
        const s = stream("idem");
        const batch = [ev("One", { n: 1 }), ev("Two", { n: 2 })];
        const first = await store.append(s, batch, "no_stream");
        expect(await store.append(s, batch, "no_stream")).toEqual(first);
        const later = [ev("Three")];
        const third = await store.append(s, later, 1);
        expect(await store.append(s, later, 1)).toEqual(third);
        const read = await store.readStream(s);
        expect(read.map((e) => [e.id, e.type, e.revision])).toEqual([
          [batch[0]!.id, "One", 0],
          [batch[1]!.id, "Two", 1],
          [later[0]!.id, "Three", 2],
        ]);
        expect(
          (await store.readAll({ after: read[0]!.position - 1 })).filter((e) => e.stream === s).map((e) => e.id),
        ).toEqual(read.map((e) => e.id));
      });

      it("knows a stream's revision, and acknowledges an append re-sent at its revision after others followed it", async () => {
        const s = stream("revision");
        expect(await store.streamRevision(s)).toBe(-1);
        await store.append(s, [ev("One"), ev("Two")], "no_stream");
        expect(await store.streamRevision(s)).toBe(1);
        // A step whose acknowledgement was lost, then another writer's event after it.
        const step = [ev("Step")];
        const first = await store.append(s, step, 1);
        await store.append(s, [ev("Other")], 2);
        expect(await store.append(s, step, 1)).toEqual(first);
        expect(await store.streamRevision(s)).toBe(3);
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(["One", "Two", "Step", "Other"]);
      });

      it("refuses stored ids re-appended where they were not: a wrong expected revision, nothing stored", async () => {
        const s = stream("idem2");
        const batch = [ev("One"), ev("Two")];
        await store.append(s, batch, "no_stream");
        await store.append(s, [ev("Three")], 1);
        await expect(store.append(s, batch, 1)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(["One", "Two", "Three"]);
      });

      it("never delivers a checkpoint save to subscribeToAll, in catch-up or live", async () => {
        const s = stream("cpsub");
        const name = `cpsub-${run}`;
        const start = await store.append(s, [ev("Before")], "no_stream");
        await store.save(name, start.position); // before the subscription: would come in catch-up
        const seen: RecordedEvent[] = [];
        let sawLast: () => void = () => undefined;
        const last = new Promise<void>((r) => (sawLast = r));
        const sub = store.subscribeToAll({ after: start.position - 1 }, async (e) => {
          if (e.stream.includes(run)) seen.push(e);
          if (e.stream === s && e.type === "After") sawLast();
          // A subscriber that checkpoints as it goes, as the projections do: must not see its own saves.
          if (e.stream.includes(run)) await store.save(name, e.position);
        });
        await store.save(name, start.position + 1); // while subscribed: would come live
        await store.append(s, [ev("After")], 0);
        await last;
        await sub.stop();
        expect(seen.map((e) => [e.stream, e.type])).toEqual([
          [s, "Before"],
          [s, "After"],
        ]);
      });

      it("replays in pages (readAllPages) exactly the events readAll returns after a position, in order, no checkpoint, no empty page", async () => {
        const a = stream("pages-a");
        const b = stream("pages-b");
        const first = await store.append(a, [ev("P", { i: 0 })], "no_stream");
        for (let i = 1; i < 24; i++) {
          await store.append(i % 3 === 0 ? b : a, [ev("P", { i })], "any");
          if (i % 5 === 0) await store.save(`pages-${run}`, first.position + i);
        }
        const fields = (e: RecordedEvent) => [
          e.position,
          e.id,
          e.stream,
          e.revision,
          e.type,
          e.time,
          e.data,
          e.metadata,
        ];
        const all = (await store.readAll({ after: first.position - 1 })).map(fields);
        expect(all.filter((e) => String(e[2]).includes(run) && String(e[2]).includes("pages")).length).toBe(24);
        for (const pageSize of [1, 5, 24, 1000]) {
          const pages: (readonly RecordedEvent[])[] = [];
          for await (const page of store.readAllPages({ after: first.position - 1, pageSize })) pages.push(page);
          expect(pages.every((p) => p.length > 0 && p.length <= pageSize)).toBe(true);
          expect(pages.flat().map(fields)).toEqual(all);
        }
      });

      it("knows its head: the newest event's position, never a checkpoint's, the last of readAll", async () => {
        const s = stream("head");
        const a = await store.append(s, [ev("A"), ev("B")], "no_stream");
        expect(await store.headPosition()).toBe(a.position);
        await store.save(`head-${run}`, a.position);
        await store.save(`head-${run}`, a.position + 1);
        expect(await store.headPosition()).toBe(a.position);
        expect((await store.readAll({ after: a.position - 1 })).at(-1)?.position).toBe(a.position);
        const b = await store.append(s, [ev("C")], 1);
        expect(await store.headPosition()).toBe(b.position);
      });

      it("never returns a checkpoint from readAll, nor counts one in maxCount", async () => {
        const s = stream("cpread");
        const name = `cpread-${run}`;
        const a = await store.append(s, [ev("A")], "no_stream");
        await store.save(name, a.position);
        await store.save(name, a.position);
        const b = await store.append(s, [ev("B")], 0);
        expect(
          (await store.readAll({ after: a.position - 1 }))
            .filter((e) => e.stream.includes(run))
            .map((e) => [e.stream, e.type]),
        ).toEqual([
          [s, "A"],
          [s, "B"],
        ]);
        const next = await store.readAll({ after: a.position, maxCount: 1 });
        expect(next.map((e) => [e.stream, e.type, e.position])).toEqual([[s, "B", b.position]]);
      });

      it("acknowledges appends to many streams made in one tick, each once, and keeps them across close and reopen", async () => {
        const streams = Array.from({ length: 50 }, (_, i) => stream(`tick-${i}`));
        const batches = streams.map((s, i) => [ev("First", { i }), ev("Second", { i })]);
        // All started before any is awaited: they arrive in the same turn of the event loop.
        const results = await Promise.all(streams.map((s, i) => store.append(s, batches[i]!, "no_stream")));
        expect(results.map((r) => r.nextExpectedRevision)).toEqual(streams.map(() => 1));
        expect(new Set(results.map((r) => r.position)).size).toBe(streams.length);
        const next = await Promise.all(streams.map((s, i) => store.append(s, [ev("Third", { i })], 1)));
        expect(next.map((r) => r.nextExpectedRevision)).toEqual(streams.map(() => 2));

        await store.close();
        store = await open();
        for (const [i, s] of streams.entries()) {
          const read = await store.readStream(s);
          expect(read.map((e) => [e.type, e.revision, e.data])).toEqual([
            ["First", 0, { i }],
            ["Second", 1, { i }],
            ["Third", 2, { i }],
          ]);
          expect(read.map((e) => e.id).slice(0, 2)).toEqual(batches[i]!.map((e) => e.id));
          expect(read[1]!.position).toBe(results[i]!.position);
          expect(read[2]!.position).toBe(next[i]!.position);
        }
      });

      it("fails only the append with a wrong expected revision among appends made in the same tick", async () => {
        const [a, b, c] = [stream("mix-a"), stream("mix-b"), stream("mix-c")];
        await store.append(b, [ev("B0")], "no_stream");
        const settled = await Promise.allSettled([
          store.append(a, [ev("A0")], "no_stream"),
          store.append(b, [ev("Stale1"), ev("Stale2")], 3),
          store.append(c, [ev("C0")], "no_stream"),
        ]);
        expect(settled.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
        expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ stream: b, expected: 3, actual: 0 });
        expect((await store.readStream(a)).map((e) => e.type)).toEqual(["A0"]);
        expect((await store.readStream(b)).map((e) => e.type)).toEqual(["B0"]);
        expect((await store.readStream(c)).map((e) => e.type)).toEqual(["C0"]);
      });

      it("acknowledges a retried append again with its original result when it arrives among other appends in one tick", async () => {
        const s = stream("retry-tick");
        const batch = [ev("One"), ev("Two")];
        const first = await store.append(s, batch, "no_stream");
        const others = [stream("retry-tick-x"), stream("retry-tick-y")];
        const [x, retried, y] = await Promise.all([
          store.append(others[0]!, [ev("X")], "no_stream"),
          store.append(s, batch, "no_stream"),
          store.append(others[1]!, [ev("Y")], "no_stream"),
        ]);
        expect(retried).toEqual(first);
        expect(x.nextExpectedRevision).toBe(0);
        expect(y.nextExpectedRevision).toBe(0);
        expect((await store.readStream(s)).map((e) => e.id)).toEqual(batch.map((e) => e.id));
      });

      it("passes its start-up write check when healthy", async () => {
        await expect(store.checkWritable()).resolves.toBeUndefined();
      });

      describe("filtered reads over a log whose times are not in store order", () => {
        const log = skewedLog(run, 2500);
        let after = 0;
        let through = 0;
        /** Every stored event of the log (and only those: the bounds hold nothing else), in store order. */
        let stored: RecordedEvent[] = [];

        beforeAll(async () => {
          after = await store.headPosition();
          await appendLog(store, log);
          through = await store.headPosition();
          for await (const page of store.readAllPages({ after, pageSize: 1000 }))
            stored.push(...page.filter((e) => e.position <= through));
          stored = stored.filter((e) => e.stream.includes(run));
          expect(stored).toHaveLength(log.length);
        }, longTestMs);

        it(
          "returns, page after page at a small limit, exactly what readAll returns filtered in memory, for every filter alone and combined",
          async () => {
            const filters = filtersFor(run, log);
            const paged = stored.slice(0, pagedEvents);
            const pagedThrough = paged.at(-1)!.position;
            let nonEmpty = 0;
            for (const filter of filters) {
              const expected = paged.filter((e) => naiveMatch(e, filter)).map((e) => [e.position, e.id]);
              const { events, pages } = await readAllFilteredPages(store, filter, {
                after,
                through: pagedThrough,
                limit: 7,
              });
              expect(
                events.map((e) => [e.position, e.id]),
                JSON.stringify(filter),
              ).toEqual(expected);
              expect(pages.every((p) => p.events.length <= 7)).toBe(true);
              if (expected.length > 0) nonEmpty++;
            }
            // The filters are not all trivially empty: most select something, some select a few.
            expect(nonEmpty).toBeGreaterThan(filters.length / 2);
          },
          longTestMs,
        );

        it("says in scannedThrough where the next page starts, and reads nothing past `through`", async () => {
          const filter = { types: ["NodeApproved"] };
          const first = await store.readFiltered(filter, { after, through, maxCount: 3 });
          expect(first.events).toHaveLength(3);
          expect(first.scannedThrough).toBe(first.events[2]!.position);
          const cut = first.events[1]!.position;
          const short = await store.readFiltered(filter, { after, through: cut, maxCount: 3 });
          expect(short.events.map((e) => e.position)).toEqual(first.events.slice(0, 2).map((e) => e.position));
          expect(short.scannedThrough).toBe(cut);
          const head = await store.headPosition();
          expect(await store.readFiltered(filter, { after: head + 10, maxCount: 3 })).toEqual({
            events: [],
            scannedThrough: head + 10,
          });
        });

        it("bounds a time window by positions that hold every event in it", async () => {
          for (const [since, until] of [
            [LOG_START_MS + 300_000, LOG_START_MS + 360_000],
            [LOG_START_MS + 1_000_000, undefined],
            [undefined, LOG_START_MS + 900_000],
            [LOG_START_MS + 2_000_000, LOG_START_MS + 2_000_000],
          ] as const) {
            const bounds = await store.timeBounds(since, until);
            const inWindow = stored.filter((e) => naiveMatch(e, { since, until }));
            expect(inWindow.length, `${since}..${until}`).toBeGreaterThan(0);
            for (const e of inWindow) {
              expect(e.position).toBeGreaterThan(bounds.after);
              if (bounds.through !== undefined) expect(e.position).toBeLessThanOrEqual(bounds.through);
            }
          }
        });

        it("knows the end of the log as of a moment: the longest prefix with no event later than it, when it keeps a time index", async () => {
          let all: RecordedEvent[] | undefined;
          for (const t of [LOG_START_MS - 1, LOG_START_MS + 123_456, LOG_START_MS + 1_500_000, LOG_START_MS + 9e9]) {
            const at = await store.positionAt(t);
            if (at === undefined) continue;
            all ??= await store.readAll();
            let max = -Infinity;
            let prefix = 0;
            for (const e of all) {
              max = Math.max(max, Number.isNaN(Date.parse(e.time)) ? -Infinity : Date.parse(e.time));
              if (max > t) break;
              prefix = e.position;
            }
            expect(at, String(t)).toBe(prefix);
          }
        });

        it("refuses a read it cannot make sense of, naming the field", async () => {
          await expect(store.readFiltered({}, { maxCount: 0 })).rejects.toThrow(/maxCount/);
          await expect(store.readFiltered({ since: Number.NaN }, { maxCount: 1 })).rejects.toThrow(/filter\.since/);
          await expect(store.readFiltered({ actors: [{ type: "" }] }, { maxCount: 1 })).rejects.toThrow(
            /filter\.actors\[0\]/,
          );
          await expect(store.readFiltered({}, { maxCount: 1, after: -1 })).rejects.toThrow(/after/);
        });
      });
    },
  );
}
