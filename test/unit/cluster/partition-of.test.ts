import { describe, expect, it } from "vitest";
import { partitionOf } from "../../../src/cluster/partition-of.ts";

describe("partitionOf", () => {
  it("is FNV-1a over the id's UTF-8 bytes, so every orchestrator of every version agrees", () => {
    // Published FNV-1a 32-bit vectors: "" → 0x811c9dc5, "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
    expect(partitionOf("", 2 ** 32 - 1)).toBe(0x811c9dc5);
    expect(partitionOf("a", 2 ** 32 - 1)).toBe(0xe40c292c);
    expect(partitionOf("foobar", 2 ** 32 - 1)).toBe(0xbf9cf968);
    expect(partitionOf("node-1", 64)).toBe(3);
    expect(partitionOf("é", 1000)).toBe(partitionOf("\u00e9", 1000));
  });

  it("spreads ids evenly enough that no partition is a hot spot", () => {
    const counts = new Array<number>(64).fill(0);
    for (let i = 0; i < 64_000; i++) counts[partitionOf(`n-${i.toString(16)}`, 64)]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1200);
  });

  it("refuses a partition count that is not a positive integer", () => {
    expect(() => partitionOf("x", 0)).toThrow(RangeError);
    expect(() => partitionOf("x", 1.5)).toThrow(RangeError);
  });
});
