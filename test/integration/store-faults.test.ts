import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MIN_FREE_BYTES, SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import {
  mountExt4,
  mountTmpfs,
  whyCannotMount,
  whyCannotMountExt4,
  type ScratchFs,
} from "../support/scratch-filesystem.ts";

/**
 * The SQLite store on filesystems that really are full or read-only (see scratch-filesystem.ts):
 * store trouble is StoreUnavailableError with the reason, nothing half-written is left, the same
 * append succeeds once the trouble is gone, and a store that cannot be written is refused at
 * start-up.
 */
const cannotMount = whyCannotMount();
const cannotMountExt4 = whyCannotMountExt4();
if (cannotMount) console.warn(`SQLite full-disk tests skipped: ${cannotMount}`);
if (cannotMountExt4) console.warn(`SQLite read-only-while-running test skipped: ${cannotMountExt4}`);

const ev = (type = "Tick"): NewEvent => ({
  id: randomUUID(),
  type,
  data: { pad: "x".repeat(2000) },
  metadata: { time: new Date().toISOString() },
});

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** Opening and the start-up check together, as `serve` does. */
async function openChecked(file: string): Promise<SqliteEventStore> {
  const store = new SqliteEventStore(file);
  try {
    await store.checkWritable();
    return store;
  } catch (e) {
    await store.close();
    throw e;
  }
}

describe.skipIf(cannotMount !== undefined)("SQLite store on a real full or read-only filesystem", () => {
  const mounted: ScratchFs[] = [];
  const stores: SqliteEventStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const m of mounted.splice(0)) m.unmount();
  });

  it("fails appends on a full disk as unavailable, stores nothing, and takes the same append once space is back", async () => {
    const fs = mountTmpfs(32 * 1024 * 1024);
    mounted.push(fs);
    const store = await openChecked(join(fs.dir, "shoal.db"));
    stores.push(store);
    await store.append("node-a", [ev("First")], "no_stream");

    fs.fill();
    expect(fs.freeBytes()).toBeLessThan(4096);
    const batch = [ev("Second"), ev("Third")];
    const full = await failure(store.append("node-a", batch, 0));
    expect(full).toBeInstanceOf(StoreUnavailableError);
    expect((full as Error).message).toMatch(/^event store unavailable: the disk is full \(SQLITE_FULL/);
    expect((await store.readStream("node-a")).map((e) => e.type)).toEqual(["First"]);
    expect(await failure(store.checkWritable())).toBeInstanceOf(StoreUnavailableError);
    expect(await failure(store.save("publisher", 1))).toBeInstanceOf(StoreUnavailableError);

    fs.free();
    const ok = await store.append("node-a", batch, 0);
    expect(ok.nextExpectedRevision).toBe(2);
    expect((await store.readStream("node-a")).map((e) => [e.type, e.id])).toEqual([
      ["First", expect.any(String)],
      ["Second", batch[0]!.id],
      ["Third", batch[1]!.id],
    ]);
    await expect(store.checkWritable()).resolves.toBeUndefined();
  });

  it("refuses at start-up a store whose disk has less than the minimum free", async () => {
    const fs = mountTmpfs(MIN_FREE_BYTES / 2);
    mounted.push(fs);
    const refused = await failure(openChecked(join(fs.dir, "shoal.db")));
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(
      /the disk holding .*shoal\.db is \(nearly\) full: \d+ KiB free, at least 16 MiB needed/,
    );
  });

  it("refuses at start-up a store on a read-only filesystem, and leaves it as it was", async () => {
    const fs = mountTmpfs(32 * 1024 * 1024);
    mounted.push(fs);
    const file = join(fs.dir, "shoal.db");
    const before = await openChecked(file);
    await before.append("node-a", [ev("Kept")], "no_stream");
    await before.close();
    fs.remountReadOnly();
    const refused = await failure(openChecked(file));
    fs.unmount(); // also proves the refused open left nothing open on it
    mounted.pop();
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(
      /^event store unavailable: cannot open SQLite store .*shoal\.db: it is read-only \(the filesystem holding .* is read-only\)/,
    );
  });

  it.skipIf(cannotMountExt4 !== undefined)(
    "fails appends as unavailable when the filesystem turns read-only while the store is open",
    async () => {
      const fs = mountExt4(64 * 1024 * 1024);
      mounted.push(fs);
      const store = await openChecked(join(fs.dir, "shoal.db"));
      stores.push(store);
      await store.append("node-a", [ev("First")], "no_stream");
      fs.failReadOnly();
      const refused = await failure(store.append("node-a", [ev("Second")], 0));
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      // SQLite sees EROFS as SQLITE_IOERR_WRITE; the store says what the filesystem says.
      expect((refused as Error).message).toMatch(
        /^event store unavailable: it is read-only \(the filesystem holding .* is read-only\) \(SQLITE_IOERR/,
      );
      expect((await store.readStream("node-a")).map((e) => e.type)).toEqual(["First"]);
    },
  );
});
