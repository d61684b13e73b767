import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore, type CommitBatch } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { AppendResult, NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { tempDir } from "../support/fixtures.ts";

/**
 * The writer thread's guarantees: batches are committed in the order they were sent, while the
 * next is already out (a big queue goes as two), so an append is checked against everything
 * acknowledged or sent before it; every caller is acknowledged only after its commit, and a
 * read made after an acknowledgement (on the event loop's own connection) sees it.
 */
const ev = (type = "Tick", data: unknown = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { time: "2026-01-01T00:00:00.000Z" },
});
const root = join(import.meta.dirname, "../..");
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("SQLite writer thread", () => {
  const stores: SqliteEventStore[] = [];
  const open = (file = join(tempDir(), "shoal.db")) => {
    const store = new SqliteEventStore(file, { writerThread: true });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it("sends a big queue as two batches and checks an append in the second against the first", async () => {
    const store = open();
    const batches: CommitBatch[] = [];
    store.onCommit((b) => batches.push(b));
    const first = store.append("node-x", [ev("X0")], "no_stream");
    const fillers = Array.from({ length: 1000 }, (_, i) => store.append(`node-f${i}`, [ev("F")], "no_stream"));
    const next = store.append("node-x", [ev("X1")], 0);
    const stale = store.append("node-x", [ev("Stale")], "no_stream");
    const retry = store.append("node-x", [ev("X2")], 0);

    expect(await first).toEqual({ nextExpectedRevision: 0, position: 1 });
    await Promise.all(fillers);
    expect(await next).toMatchObject({ nextExpectedRevision: 1 });
    await expect(stale).rejects.toMatchObject({
      _tag: "WrongExpectedRevision",
      stream: "node-x",
      expected: "no_stream",
      actual: 1,
    });
    await expect(retry).rejects.toMatchObject({ _tag: "WrongExpectedRevision", expected: 0, actual: 1 });
    // Two commits, the first holding node-x's first event, the second the append that expected it.
    expect(batches).toHaveLength(2);
    expect(batches.map((b) => b.events).reduce((a, b) => a + b)).toBe(1002);
    expect(Math.max(...batches.map((b) => b.events))).toBeLessThan(1002);
    expect((await store.readStream("node-x")).map((e) => [e.type, e.revision])).toEqual([
      ["X0", 0],
      ["X1", 1],
    ]);
  });

  it("keeps many writers' expected revisions right while batches overlap; each sees its append on reading back", async () => {
    const store = open();
    const writers = 800;
    const rounds = 6;
    const delivered: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({}, (e) => {
      delivered.push(e);
    });
    const results: AppendResult[] = [];
    const writer = async (w: number): Promise<void> => {
      const stream = `node-w${w}`;
      let expected: number | "no_stream" = "no_stream";
      for (let r = 0; r < rounds; r++) {
        // Every few rounds a stale attempt first, in the same turn as the real one: refused alone.
        const stale =
          r > 0 && r % 2 === 0
            ? store.append(stream, [ev("Stale")], (expected as number) - 1).then(
                () => "stored",
                (e: unknown) => e,
              )
            : undefined;
        const result = await store.append(stream, [ev("W", { w, r })], expected);
        if (stale) expect(await stale).toMatchObject({ _tag: "WrongExpectedRevision", actual: r - 1 });
        expect(result.nextExpectedRevision).toBe(r);
        // Read-your-writes on the event loop's connection, right after the acknowledgement.
        const read = await store.readStream(stream, { fromRevision: r });
        expect(read.map((e) => [e.revision, e.position])).toEqual([[r, result.position]]);
        results.push(result);
        expected = r;
      }
    };
    // A writer to one stream with "any", each append made while earlier ones are still out.
    const anyWriter = async (): Promise<void> => {
      const pending: Promise<AppendResult>[] = [];
      for (let i = 0; i < 40; i++) {
        pending.push(store.append("node-any", [ev("Any", { i })], "any"));
        await nextTurn();
      }
      const acked = await Promise.all(pending);
      expect(acked.map((a) => a.nextExpectedRevision)).toEqual(acked.map((_, i) => i));
    };
    await Promise.all([...Array.from({ length: writers }, (_, w) => writer(w)), anyWriter()]);

    const total = writers * rounds + 40;
    expect(store.commitStats.events).toBe(total);
    expect(new Set(results.map((r) => r.position)).size).toBe(writers * rounds);
    expect((await store.readStream("node-any")).map((e) => (e.data as { i: number }).i)).toEqual(
      Array.from({ length: 40 }, (_, i) => i),
    );
    // The live subscription got every acknowledged event, in store order.
    for (let i = 0; i < 200 && delivered.length < total; i++) await new Promise((r) => setTimeout(r, 25));
    await subscription.stop();
    expect(delivered).toHaveLength(total);
    expect(delivered.map((e) => e.position)).toEqual([...delivered.map((e) => e.position)].sort((a, b) => a - b));
  });

  it("commits on close every write still queued, beyond the two batches out, then refuses new ones", async () => {
    const file = join(tempDir(), "shoal.db");
    const store = open(file);
    const pending: Promise<unknown>[] = [];
    for (let tick = 0; tick < 4; tick++) {
      for (let i = 0; i < 700; i++) pending.push(store.append(`node-c${tick}-${i}`, [ev("Queued")], "no_stream"));
      pending.push(store.save("publisher", tick));
      await nextTurn();
    }
    await store.close();
    const settled = await Promise.allSettled(pending);
    expect(settled.filter((s) => s.status !== "fulfilled")).toEqual([]);
    await expect(store.append("node-c0-0", [ev()], 0)).rejects.toBeInstanceOf(StoreUnavailableError);
    const reopened = open(file);
    expect(await reopened.readAll()).toHaveLength(4 * 700);
    expect(await reopened.load("publisher")).toBe(3);
  });

  it("passes the start-up write check through the writer thread without counting it as a commit", async () => {
    const store = open();
    await store.checkWritable();
    expect(store.commitStats.commits).toBe(0);
  });

  it("loads from the compiled build, and lets the process exit once idle, after the acknowledgement it awaits", () => {
    const compiled = join(root, "dist/src/events/sqlite/sqlite-event-store.js");
    expect(existsSync(compiled), "dist/ is built by the test suite's global setup").toBe(true);
    const script = (from: string) => `
      import { SqliteEventStore } from ${JSON.stringify(from)};
      const store = new SqliteEventStore(process.argv.at(-1), { writerThread: true });
      const r = await store.append("node-p", [{ id: "e-" + process.pid, type: "T", data: { ok: true }, metadata: {} }], "no_stream");
      const [e] = await store.readStream("node-p");
      console.log(JSON.stringify({ r, type: e.type, data: e.data }));
      // no close(): an idle writer thread must not keep the process alive
    `;
    const runs = [
      spawnSync(process.execPath, ["--input-type=module", "-e", script(compiled), join(tempDir(), "shoal.db")], {
        cwd: root,
        encoding: "utf8",
        timeout: 20_000,
      }),
      spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          script("./src/events/sqlite/sqlite-event-store.ts"),
          join(tempDir(), "shoal.db"),
        ],
        {
          cwd: root,
          encoding: "utf8",
          timeout: 20_000,
        },
      ),
    ];
    for (const run of runs) {
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        r: { nextExpectedRevision: 0, position: 1 },
        type: "T",
        data: { ok: true },
      });
    }
  });
});
