import { describe, expect, it } from "vitest";
import { SortedEntries, compareKeys, type SortKey } from "../../../src/projections/node-index/sorted-entries.ts";
import { seededRandom } from "../../support/seeded-random.ts";

type Pair = [SortKey, string];
const cmp = (a: Pair, b: Pair) => compareKeys(a[0], b[0]) || compareKeys(a[1], b[1]);

function walk(
  set: SortedEntries,
  descending: boolean,
  from?: { key: SortKey; id: string; strict: boolean },
  max = Infinity,
): Pair[] {
  const out: Pair[] = [];
  for (const c = set.seek(descending, from); !c.done && out.length < max; c.next()) out.push([c.key, c.id]);
  return out;
}

function expected(model: Pair[], descending: boolean, from?: { key: SortKey; id: string; strict: boolean }): Pair[] {
  const sorted = [...model].sort(cmp);
  if (descending) sorted.reverse();
  if (!from) return sorted;
  const target: Pair = [from.key, from.id];
  return sorted.filter((p) => {
    const c = cmp(p, target) * (descending ? -1 : 1);
    return from.strict ? c > 0 : c >= 0;
  });
}

describe("SortedEntries", () => {
  it("starts empty and seeks nothing", () => {
    const set = new SortedEntries();
    expect(set.size).toBe(0);
    expect(walk(set, false)).toEqual([]);
    expect(walk(set, true, { key: 1, id: "a", strict: true })).toEqual([]);
    expect(set.delete(1, "a")).toBe(false);
  });

  it("keeps (key, id) pairs ordered by key then id, and refuses duplicates", () => {
    const set = new SortedEntries();
    expect(set.add(2, "b")).toBe(true);
    expect(set.add(1, "z")).toBe(true);
    expect(set.add(2, "a")).toBe(true);
    expect(set.add(2, "a")).toBe(false);
    expect([...set.entries()]).toEqual([
      [1, "z"],
      [2, "a"],
      [2, "b"],
    ]);
    expect(walk(set, true)).toEqual([
      [2, "b"],
      [2, "a"],
      [1, "z"],
    ]);
    expect(walk(set, false, { key: 2, id: "a", strict: true })).toEqual([[2, "b"]]);
    expect(walk(set, false, { key: 2, id: "a", strict: false })).toEqual([
      [2, "a"],
      [2, "b"],
    ]);
    expect(walk(set, true, { key: 2, id: "a", strict: true })).toEqual([[1, "z"]]);
    expect(walk(set, true, { key: 2, id: "a", strict: false })).toEqual([
      [2, "a"],
      [1, "z"],
    ]);
    expect(set.delete(2, "b")).toBe(true);
    expect(set.delete(2, "b")).toBe(false);
    expect(set.size).toBe(2);
  });

  // Thousands of entries span many chunks, so splits, merges and seeks across chunk ends all run.
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`matches a sorted array through random adds, deletes and seeks (seed ${seed})`, () => {
      const random = seededRandom(seed);
      const set = new SortedEntries();
      const model = new Map<string, Pair>();
      const keyOf = (p: Pair) => `${p[0]}|${p[1]}`;
      const numeric = seed % 2 === 0;
      const randomPair = (): Pair => [numeric ? -random.int(50) : `k${random.int(50)}`, `n${random.int(4000)}`];
      for (let step = 0; step < 12_000; step++) {
        const pair = randomPair();
        // Phases of mostly-adding and mostly-deleting grow the set past several chunks and thin it out again.
        const adding = Math.floor(step / 3000) % 2 === 0 ? random.next() < 0.8 : random.next() < 0.2;
        if (adding) expect(set.add(...pair)).toBe(!model.has(keyOf(pair)));
        else {
          const existing = random.next() < 0.7 && model.size > 0 ? random.pick([...model.values()].slice(0, 50)) : pair;
          expect(set.delete(...existing)).toBe(model.has(keyOf(existing)));
          model.delete(keyOf(existing));
          continue;
        }
        model.set(keyOf(pair), pair);
        if (step % 997 === 0) {
          expect(set.size).toBe(model.size);
          expect([...set.entries()]).toEqual(expected([...model.values()], false));
        }
        if (step % 151 === 0) {
          const [key, id] =
            random.next() < 0.5 && model.size > 0 ? random.pick([...model.values()].slice(0, 50)) : randomPair();
          for (const descending of [false, true]) {
            for (const strict of [false, true]) {
              const from = { key, id, strict };
              expect(walk(set, descending, from, 30)).toEqual(
                expected([...model.values()], descending, from).slice(0, 30),
              );
            }
          }
        }
      }
      expect([...set.entries()]).toEqual(expected([...model.values()], false));
    });
  }

  it("built in order (full chunks, each split at its end), then changed at random, still matches a sorted array", () => {
    const random = seededRandom(7);
    const set = new SortedEntries();
    const model = new Map<string, Pair>();
    for (let i = 0; i < 5_000; i++) {
      const pair: Pair = [0, `n${String(i).padStart(5, "0")}`];
      expect(set.add(...pair)).toBe(true);
      model.set(`${pair[0]}|${pair[1]}`, pair);
    }
    expect([...set.entries()]).toEqual(expected([...model.values()], false));
    for (let step = 0; step < 4_000; step++) {
      const pair: Pair = [-random.int(3), `n${String(random.int(6_000)).padStart(5, "0")}`];
      if (random.next() < 0.5) {
        if (set.add(...pair)) model.set(`${pair[0]}|${pair[1]}`, pair);
      } else {
        const existing: Pair = random.next() < 0.5 ? [0, pair[1]] : pair;
        expect(set.delete(...existing)).toBe(model.delete(`${existing[0]}|${existing[1]}`));
      }
    }
    expect(set.size).toBe(model.size);
    expect([...set.entries()]).toEqual(expected([...model.values()], false));
    const from = { key: -1, id: "n02500", strict: true };
    expect(walk(set, true, from, 700)).toEqual(expected([...model.values()], true, from).slice(0, 700));
    expect(walk(set, false, from, 700)).toEqual(expected([...model.values()], false, from).slice(0, 700));
  });

  it("replaceMany leaves the set a delete then an add per entry leaves, with few changes or many, and seeks alike", () => {
    const random = seededRandom(23);
    for (const size of [0, 40, 3_000, 20_000]) {
      const set = new SortedEntries();
      const model = new Map<string, SortKey>();
      const id = () => `n${String(random.int(size * 2 + 10)).padStart(6, "0")}`;
      for (let i = 0; i < size; i++) {
        const n = id();
        const key = -random.int(3);
        if (!model.has(n) && set.add(key, n)) model.set(n, key);
      }
      // A few changes (a seek and a move each), a few hundred, as many as the set holds (merged into the chunks).
      for (const changes of [3, 300, size]) {
        const removed = new Map<string, SortKey>();
        const added = new Map<string, SortKey>();
        for (let i = 0; i < changes; i++) {
          const n = id();
          const roll = random.next();
          // Present, removed (and maybe added again under its key or another); absent, added; or absent, "removed".
          if (model.has(n) && roll < 0.6) removed.set(n, model.get(n) as SortKey);
          if ((model.has(n) ? removed.has(n) : roll < 0.8) && random.next() < 0.7) added.set(n, -random.int(3));
          if (!model.has(n) && roll >= 0.8) removed.set(n, -random.int(3));
        }
        const oneByOne = new SortedEntries();
        for (const [n, key] of model) oneByOne.add(key, n);
        for (const [n, key] of removed) oneByOne.delete(key, n);
        for (const [n, key] of added) oneByOne.add(key, n);
        set.replaceMany(removed, added);
        for (const n of removed.keys()) model.delete(n);
        for (const [n, key] of added) model.set(n, key);
        const pairs: Pair[] = [...model].map(([n, key]) => [key, n]);
        expect([...set.entries()], `${size} entries, ${changes} changes`).toEqual([...oneByOne.entries()]);
        expect([...set.entries()]).toEqual(expected(pairs, false));
        expect(set.size).toBe(model.size);
        const from = { key: -1, id: "n000500", strict: false };
        expect(walk(set, true, from, 900)).toEqual(expected(pairs, true, from).slice(0, 900));
        expect(walk(set, false, from, 900)).toEqual(expected(pairs, false, from).slice(0, 900));
        // Single adds and deletes go on working on the merged chunks.
        for (let i = 0; i < 200; i++) {
          const n = id();
          if (model.has(n)) {
            expect(set.delete(model.get(n) as SortKey, n)).toBe(true);
            model.delete(n);
          } else {
            const key = -random.int(3);
            expect(set.add(key, n)).toBe(true);
            model.set(n, key);
          }
        }
        expect([...set.entries()]).toEqual(
          expected(
            [...model].map(([n, key]) => [key, n] as Pair),
            false,
          ),
        );
      }
    }
  });

  it("a cursor with a fixed key shows that key for every entry, the entries' ids in their order", () => {
    const set = new SortedEntries();
    for (const id of ["c", "a", "b"]) set.add(id, id);
    const walked: Pair[] = [];
    for (const c = set.seek(false, { key: "a", id: "a", strict: true }, "APPROVED"); !c.done; c.next())
      walked.push([c.key, c.id]);
    expect(walked).toEqual([
      ["APPROVED", "b"],
      ["APPROVED", "c"],
    ]);
  });
});
