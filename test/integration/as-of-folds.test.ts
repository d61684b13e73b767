import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { Packr } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseLabelSelector } from "../../src/labels/label-selector.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { EventStore, RecordedEvent } from "../../src/events/store/event-store.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { writeFileAtomicAsync } from "../../src/fs/write-file-atomic.ts";
import { AsOfFolds } from "../../src/projections/as-of/as-of-folds.ts";
import { ClusterAsOf } from "../../src/projections/as-of/cluster-as-of.ts";
import { AsOfSeeds } from "../../src/snapshots/as-of-seeds.ts";
import { encodeNodeStateSnapshot } from "../../src/snapshots/node-state-snapshot-file.ts";
import { JobReadModel } from "../../src/projections/as-of/job-read-model.ts";
import { NodeReadModel } from "../../src/projections/as-of/node-read-model.ts";
import { positionAsOf } from "../../src/projections/as-of/position-as-of.ts";
import { EventEnvelope } from "../../src/projections/event-envelope.ts";
import type { NodeView } from "../../src/projections/node-view.ts";
import { writeClusterHistory } from "../support/cluster-history.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";

/**
 * The read models as of a position, on a generated cluster history in a real store file: every answer equals a fresh
 * fold of the events up to that position, however the kept states were reached (forward from a kept one, back to the
 * start, held or not), and a later question reads only the events after the nearest kept state.
 */

const EVENTS = 6_000;
let store: SqliteEventStore;
let all: RecordedEvent[];
/** Events handed out by the store's reads since the last reset. */
let read = 0;
let counting: EventStore;

/** The store, counting the events its reads return. */
function countingStore(inner: EventStore): EventStore {
  return new Proxy(inner, {
    get(target, name, receiver) {
      if (name === "readAll")
        return async (options?: Parameters<EventStore["readAll"]>[0]) => {
          const page = await target.readAll(options);
          read += page.length;
          return page;
        };
      if (name === "readAllPages")
        return async function* (options: Parameters<EventStore["readAllPages"]>[0]) {
          for await (const page of target.readAllPages(options)) {
            read += page.length;
            yield page;
          }
        };
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** What a node model holds, in a form toEqual compares: every view, and the id order's whole list. */
function nodesOf(model: NodeReadModel) {
  const views = model.views.all().sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
  const listed = model.index
    .query({ order: "id", reverse: false, selector: parseLabelSelector(""), limit: Number.POSITIVE_INFINITY })
    .views.map((v) => v.nodeId);
  return { views: JSON.parse(JSON.stringify(views)) as unknown, listed };
}

function jobsOf(model: JobReadModel) {
  const snapshot = model.views.snapshot();
  return snapshot === undefined
    ? undefined
    : (JSON.parse(JSON.stringify({ ...snapshot, anchor: undefined })) as unknown);
}

/** The oracle: a fresh model fed every stored event up to `position`, one at a time, never held. */
function freshNodes(position: number): NodeReadModel {
  const model = new NodeReadModel();
  for (const e of all) if (e.position <= position) model.handle(new EventEnvelope(e));
  return model;
}

function freshJobs(position: number): JobReadModel {
  const model = new JobReadModel();
  for (const e of all) if (e.position <= position) model.handle(new EventEnvelope(e));
  return model;
}

beforeAll(async () => {
  store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  await writeClusterHistory(store, EVENTS, 7);
  all = await store.readAll();
  counting = countingStore(store);
}, 120_000);

afterAll(async () => {
  await store?.close();
});

describe("AsOfFolds", () => {
  it("answers every position as a fresh fold does, folding on from the nearest kept state at or before it", async () => {
    expect(all.length).toBe(EVENTS);
    const folds = new AsOfFolds({
      store: counting,
      logger: silentLogger,
      name: "nodes",
      create: () => new NodeReadModel(),
    });
    const at = (p: number) => all[p - 1]!.position;
    const ask = async (position: number) => {
      read = 0;
      const answer = await folds.read(position, nodesOf);
      expect(answer, `as of ${position}`).toEqual(nodesOf(freshNodes(position)));
      return read;
    };

    expect(await ask(at(2_000))).toBe(2_000);
    expect(folds.keptPositions).toEqual([at(2_000)]);
    // Later: only the difference, from the kept state (moved, not copied).
    expect(await ask(at(2_300))).toBe(300);
    expect(folds.keptPositions).toEqual([at(2_300)]);
    // The same moment again: nothing read.
    expect(await ask(at(2_300))).toBe(0);
    // Earlier than every kept state: from the start, kept beside it.
    expect(await ask(at(1_000))).toBe(1_000);
    expect(folds.keptPositions).toEqual([at(1_000), at(2_300)]);
    // Between the two: from the nearer one before it.
    expect(await ask(at(2_500))).toBe(200);
    expect(folds.keptPositions).toEqual([at(1_000), at(2_500)]);
    expect(await ask(at(1_100))).toBe(100);
    // Two kept at most: an earlier question again starts over, and the least recently used goes.
    expect(await ask(at(500))).toBe(500);
    expect(folds.keptPositions).toEqual([at(500), at(1_100)]);
    // The empty cluster, and the whole log.
    expect(await folds.read(0, nodesOf)).toEqual({ views: [], listed: [] });
    read = 0;
    expect(await folds.read(at(EVENTS), nodesOf)).toEqual(nodesOf(freshNodes(at(EVENTS))));
  });

  it("a long fold (held, read through the store's replay) ends where a fold of every event does", async () => {
    const folds = new AsOfFolds({
      store: counting,
      logger: silentLogger,
      name: "nodes",
      create: () => new NodeReadModel(),
      longFold: 1_000,
    });
    for (const n of [3_500, 5_999, 1_234]) {
      const position = all[n - 1]!.position;
      read = 0;
      expect(await folds.read(position, nodesOf), `as of ${position}`).toEqual(nodesOf(freshNodes(position)));
    }
  });

  it("a short fold on from a kept state holds the model too: its index is updated once, at the end, and equals a fresh fold", async () => {
    /** Counts what reaches the index, and how: one change at a time, or together at the release. */
    class Counted extends NodeReadModel {
      /** Changes the index took one at a time, outside a batch. */
      alone = 0;
      batched = 0;
      batches = 0;
      private inBatch = false;
      constructor() {
        super();
        const update = this.index.update.bind(this.index);
        const updateMany = this.index.updateMany.bind(this.index);
        this.index.update = (id, view) => {
          if (this.inBatch) this.batched++;
          else this.alone++;
          update(id, view);
        };
        this.index.updateMany = (changes) => {
          this.batches++;
          this.inBatch = true;
          try {
            updateMany(changes);
          } finally {
            this.inBatch = false;
          }
        };
      }
    }
    let model: Counted | undefined;
    const folds = new AsOfFolds({
      store: counting,
      logger: silentLogger,
      name: "nodes",
      create: () => (model = new Counted()),
    });
    const at = (p: number) => all[p - 1]!.position;
    await folds.read(at(3_000), nodesOf);
    const kept = model as Counted;
    for (const n of [3_400, 3_600, 4_900]) {
      const { alone, batched, batches } = kept;
      expect(await folds.read(at(n), nodesOf), `as of ${at(n)}`).toEqual(nodesOf(freshNodes(at(n))));
      expect(model).toBe(kept);
      // Every change of the fold reached the index in one batch at its end, none on its own.
      expect(kept.batches, `as of ${at(n)}`).toBe(batches + 1);
      expect(kept.alone).toBe(alone);
      expect(kept.batched).toBeGreaterThan(batched);
    }
  });

  it("folds jobs and executions the same way", async () => {
    const folds = new AsOfFolds({
      store: counting,
      logger: silentLogger,
      name: "jobs",
      create: () => new JobReadModel(),
    });
    for (const n of [1_500, 4_000, 2_000, 6_000]) {
      const position = all[n - 1]!.position;
      expect(await folds.read(position, jobsOf), `as of ${position}`).toEqual(jobsOf(freshJobs(position)));
    }
  });

  it("answers one question at a time: a question asked while another folds sees its own position", async () => {
    const folds = new AsOfFolds({
      store: counting,
      logger: silentLogger,
      name: "nodes",
      create: () => new NodeReadModel(),
    });
    const positions = [4_000, 4_100, 3_000, 4_200].map((n) => all[n - 1]!.position);
    const answers = await Promise.all(positions.map((p) => folds.read(p, nodesOf)));
    answers.forEach((answer, i) => expect(answer).toEqual(nodesOf(freshNodes(positions[i]!))));
  });

  it("drops the kept states once nobody asked for KeepFor, and folds from the start after", async () => {
    const clock = new ManualClock();
    const deadlines = new DeadlineScheduler(clock);
    const keepForMs = 60_000;
    const folds = new AsOfFolds({
      store: counting,
      logger: silentLogger,
      name: "nodes",
      create: () => new NodeReadModel(),
      idle: { now: () => clock.now(), set: (key, at, fire) => deadlines.set(key, at, fire), keepForMs },
    });
    const position = all[3_000 - 1]!.position;
    await folds.read(position, nodesOf);
    await clock.advance(keepForMs - 1_000);
    // Asked again before the deadline: kept, and kept for another KeepFor from this answer.
    read = 0;
    await folds.read(position, nodesOf);
    expect(read).toBe(0);
    await clock.advance(keepForMs - 1_000);
    expect(folds.keptPositions).toEqual([position]);
    await clock.advance(2_000);
    expect(folds.keptPositions).toEqual([]);
    read = 0;
    expect(await folds.read(position, nodesOf)).toEqual(nodesOf(freshNodes(position)));
    expect(read).toBe(3_000);
    deadlines.stop();
  });
});

describe("positionAsOf", () => {
  it("is the prefix up to the last event whose running maximum time is at or before the moment, with or without time marks", async () => {
    // A store that keeps no time index (EventStoreDB's answer): the log is read from the start instead.
    const unindexed = new Proxy(store, {
      get(target, name, receiver) {
        if (name === "positionAt") return () => Promise.resolve(undefined);
        const value: unknown = Reflect.get(target, name, receiver);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as EventStore;
    const oracle = (time: number) => {
      let max = Number.NEGATIVE_INFINITY;
      let through = 0;
      for (const e of all) {
        max = Math.max(max, Date.parse(e.time));
        if (max > time) break;
        through = e.position;
      }
      return through;
    };
    const first = Date.parse(all[0]!.time);
    const last = Date.parse(all[all.length - 1]!.time);
    // Every event's own time and the millisecond before it (times out of store order among them), and beyond the ends.
    const times = [
      first - 1,
      last + 1,
      ...all.filter((_, i) => i % 97 === 0).flatMap((e) => [Date.parse(e.time), Date.parse(e.time) - 1]),
    ];
    for (const time of times) {
      const expected = oracle(time);
      expect(await positionAsOf(store, time), `as of ${new Date(time).toISOString()}`).toBe(expected);
      expect(await positionAsOf(unindexed, time), `as of ${new Date(time).toISOString()}, scanned`).toBe(expected);
    }
    expect(await positionAsOf(store, first - 1)).toBe(0);
    expect(await positionAsOf(store, last + 1)).toBe(all[all.length - 1]!.position);
  });
});

describe("node-state snapshots kept along the log (AsOfSeeds)", () => {
  /** The cluster as of a moment, its node read model folded on from the snapshots `seeds` keeps. */
  const seededAsOf = (seeds: AsOfSeeds) =>
    new ClusterAsOf({
      store: counting,
      clock: new ManualClock(),
      logger: silentLogger,
      nodeSeed: (position) => seeds.load(position, store),
    });

  /** A snapshot as the live snapshotter writes one: every node's view after the events up to the n-th, kept. */
  async function keepSnapshot(seeds: AsOfSeeds, dir: string, n: number): Promise<number> {
    const last = all[n - 1]!;
    const encoded = await encodeNodeStateSnapshot(
      {
        position: last.position,
        anchor: { stream: last.stream, revision: last.revision, id: last.id },
        views: freshNodes(last.position).views.all(),
      },
      new Date().toISOString(),
    );
    const live = join(dir, "node-states.msgpack");
    await writeFileAtomicAsync(live, encoded.chunks);
    await seeds.keep(live, last.position);
    return last.position;
  }

  it("folds the node read model on from the nearest kept snapshot at or before the moment", async () => {
    const dir = tempDir();
    const seeds = new AsOfSeeds(AsOfSeeds.dirOf(dir), 10, silentLogger);
    const [s2000, s4000] = [await keepSnapshot(seeds, dir, 2_000), await keepSnapshot(seeds, dir, 4_000)];
    expect((await seeds.list()).map((s) => s.position)).toEqual([s2000, s4000]);
    const asOf = seededAsOf(seeds);
    const ask = async (n: number) => {
      const position = all[n - 1]!.position;
      read = 0;
      expect(await asOf.nodes.read(position, nodesOf), `as of ${position}`).toEqual(nodesOf(freshNodes(position)));
      return read;
    };
    expect(await ask(4_500)).toBe(500);
    // The snapshot itself, nothing folded after it.
    expect(await ask(4_000)).toBe(0);
    expect(await ask(3_000)).toBe(1_000);
    expect(await ask(1_000)).toBe(1_000);
    // A kept state near enough before the moment is folded on rather than a snapshot read.
    expect(await ask(2_000)).toBe(1_000);
  });

  it("leaves a damaged snapshot, or one its name does not describe, alone and folds from further back", async () => {
    const dir = tempDir();
    const seeds = new AsOfSeeds(AsOfSeeds.dirOf(dir), 10, silentLogger);
    await keepSnapshot(seeds, dir, 2_000);
    const s4000 = await keepSnapshot(seeds, dir, 4_000);
    const kept = (await seeds.list()).find((s) => s.position === s4000)!;
    const bytes = await readFile(kept.path);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 10) ^ 0xff, bytes.length - 10);
    await writeFile(kept.path, bytes);
    const asOf = seededAsOf(seeds);
    const position = all[4_500 - 1]!.position;
    read = 0;
    expect(await asOf.nodes.read(position, nodesOf)).toEqual(nodesOf(freshNodes(position)));
    expect(read).toBe(4_500);
    // The snapshot of 2,000 named as if it were of 1,500: not used for a moment before 2,000.
    const s2000 = (await seeds.list())[0]!;
    await rename(s2000.path, s2000.path.replace(`-${s2000.position}.`, `-${all[1_500 - 1]!.position}.`));
    const earlier = all[1_800 - 1]!.position;
    read = 0;
    expect(await asOf.nodes.read(earlier, nodesOf)).toEqual(nodesOf(freshNodes(earlier)));
    expect(read).toBe(1_800);
  });

  it("seeds from a file that writes each slice's shared parts once, and from one of the format before it", async () => {
    const dir = tempDir();
    const seeds = new AsOfSeeds(AsOfSeeds.dirOf(dir), 10, silentLogger);
    const s4000 = await keepSnapshot(seeds, dir, 4_000);
    const current = (await seeds.list())[0]!;
    const loaded = await seeds.load(s4000, store);
    const views = freshNodes(s4000).views.all();
    expect(JSON.parse(JSON.stringify(loaded?.views))).toEqual(JSON.parse(JSON.stringify(views)));
    // Decoded once per slice: the nodes with equal labels in a slice hold one object.
    const byLabels = new Map<string, object>();
    for (const view of loaded?.views ?? []) {
      const key = JSON.stringify(view.info.Labels);
      expect(view.info.Labels).toBe(byLabels.get(key) ?? view.info.Labels);
      byLabels.set(key, view.info.Labels);
    }
    expect(byLabels.size).toBeLessThan(views.length / 2);
    // The same snapshot as the format before wrote it (every view whole) is smaller by the parts written once.
    const old = join(AsOfSeeds.dirOf(dir), `node-states-v1-${s4000}.msgpack`);
    await writeFile(old, await versionOneFile(current.path, views));
    expect((await readFile(current.path)).length).toBeLessThan((await readFile(old)).length);
    await rm(current.path);
    expect(await seeds.list()).toEqual([{ path: old, position: s4000 }]);
    const asOf = seededAsOf(seeds);
    const position = all[4_300 - 1]!.position;
    read = 0;
    expect(await asOf.nodes.read(position, nodesOf)).toEqual(nodesOf(freshNodes(position)));
    expect(read).toBe(300);
  });

  it("keeps at most its bound, the first and the newest always, the others spread over the log", async () => {
    const dir = tempDir();
    const seeds = new AsOfSeeds(AsOfSeeds.dirOf(dir), 4, silentLogger);
    const live = join(dir, "node-states.msgpack");
    for (const position of [100, 200, 300, 1_000, 1_100, 2_000, 3_000]) {
      // Replaced as the live snapshotter replaces it (a new file renamed over it).
      await writeFileAtomicAsync(live, [Buffer.from(`snapshot ${position}`)]);
      await seeds.keep(live, position);
    }
    const left = await seeds.list();
    expect(left.map((s) => s.position)).toEqual([100, 1_000, 2_000, 3_000]);
    // Each a copy of what the live file held when it was kept, not the live file itself.
    expect(await readFile(left[1]!.path, "utf8")).toBe("snapshot 1000");
  });
});

/** `views` written as format version 1 wrote them (slices of whole views), with the header of the file at `path`. */
async function versionOneFile(path: string, views: readonly NodeView[]): Promise<Buffer> {
  const packr = new Packr({ useRecords: true, mapsAsObjects: true });
  const file = await readFile(path);
  const header = packr.unpack(file.subarray(4, 4 + file.readUInt32BE(0))) as Record<string, unknown>;
  const prefixed = (bytes: Uint8Array) => {
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(bytes.length);
    return [prefix, Buffer.from(bytes)];
  };
  const body = Buffer.concat(
    Array.from({ length: Math.ceil(views.length / 1_000) }, (_, i) =>
      prefixed(packr.pack(views.slice(i * 1_000, (i + 1) * 1_000))),
    ).flat(),
  );
  const head = packr.pack({ ...header, formatVersion: 1, bodyBytes: body.length, bodyCrc32: crc32(body) });
  return Buffer.concat([...prefixed(head), body]);
}
