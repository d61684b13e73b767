import { describe, expect, it } from "vitest";
import type { BenchFigure } from "../../../bench/bench-result.ts";
import { betterOf, compareRuns, median, type SideRun } from "../../../bench/support/compare-figures.ts";

const run = (entries: Record<string, BenchFigure[]>): SideRun => new Map(Object.entries(entries));
const fig = (name: string, value: number, unit: string, extra: Partial<BenchFigure> = {}): BenchFigure => ({
  name,
  value,
  unit,
  ...extra,
});

describe("which way a figure is better", () => {
  it("a target on the value says it first", () => {
    expect(betterOf({ unit: "ms", target: { on: "value", min: 10 } })).toBe("higher");
    expect(betterOf({ unit: "/s", target: { on: "value", max: 10 } })).toBe("lower");
  });
  it("else the unit: a rate up, a time or a size down, anything else unknown", () => {
    expect(betterOf({ unit: "/s" })).toBe("higher");
    expect(betterOf({ unit: "jobs/s" })).toBe("higher");
    expect(betterOf({ unit: "events per CPU s" })).toBe("higher");
    expect(betterOf({ unit: "ms" })).toBe("lower");
    expect(betterOf({ unit: "MiB" })).toBe("lower");
    expect(betterOf({ unit: "B/node" })).toBe("lower");
    expect(betterOf({ unit: "events" })).toBe("unknown");
    expect(betterOf({ unit: "" })).toBe("unknown");
  });
});

describe("median", () => {
  it("of odd and even counts; none of nothing", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });
});

describe("comparing two sides' rounds", () => {
  it("orients the ratio so that above 1 is better, for rates and for times", () => {
    const base = [run({ hb: [fig("ingest", 100, "/s"), fig("p99", 20, "ms")] })];
    const head = [run({ hb: [fig("ingest", 90, "/s"), fig("p99", 10, "ms")] })];
    const [ingest, p99] = compareRuns(base, head);
    expect(ingest?.ratio).toBeCloseTo(0.9);
    expect(p99?.ratio).toBeCloseTo(2);
  });

  it("takes each side's median, and the spread of the paired rounds' ratios", () => {
    const base = [100, 200, 100].map((v) => run({ b: [fig("rate", v, "/s")] }));
    const head = [110, 100, 300].map((v) => run({ b: [fig("rate", v, "/s")] }));
    const [row] = compareRuns(base, head);
    expect(row?.base).toBe(100);
    expect(row?.head).toBe(110);
    expect(row?.ratio).toBeCloseTo(1.1);
    expect(row?.spread?.[0]).toBeCloseTo(0.5);
    expect(row?.spread?.[1]).toBeCloseTo(3);
    expect(row?.rounds).toBe(3);
  });

  it("keeps a figure only one side reported, with no ratio", () => {
    const base = [run({ p: [fig("old", 1, "/s")] })];
    const head = [run({ p: [fig("new", 2, "/s")] })];
    const rows = compareRuns(base, head);
    expect(rows.map((r) => [r.figure, r.base, r.head, r.ratio])).toEqual([
      ["new", undefined, 2, undefined],
      ["old", 1, undefined, undefined],
    ]);
  });

  it("gives no ratio against a zero", () => {
    const [row] = compareRuns([run({ x: [fig("r", 0, "/s")] })], [run({ x: [fig("r", 5, "/s")] })]);
    expect(row?.ratio).toBeUndefined();
  });
});
