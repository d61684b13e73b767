/**
 * The arithmetic of `npm run bench:compare`: the figures two commits' runs of the same benchmarks
 * reported, round by round, turned into one row per figure with each side's median and a ratio
 * that reads the same way for every figure (above 1: the change made it better).
 */
import type { BenchFigure } from "../bench-result.ts";

/** Which way a figure is better: a rate up, a time or a size down; unknown when neither says. */
export type Better = "higher" | "lower" | "unknown";

/** One run of one side: each benchmark's figures, as bench/run.ts saved them. */
export type SideRun = ReadonlyMap<string, readonly BenchFigure[]>;

export interface ComparedFigure {
  readonly benchmark: string;
  readonly figure: string;
  readonly unit: string;
  readonly better: Better;
  /** Medians over the rounds; undefined where that side did not report the figure. */
  readonly base: number | undefined;
  readonly head: number | undefined;
  /** head/base for a higher-is-better figure, base/head for a lower-is-better one; undefined when either is missing. */
  readonly ratio: number | undefined;
  /** The smallest and largest of the paired rounds' ratios: how far the machine moved under the two. */
  readonly spread: readonly [number, number] | undefined;
  readonly rounds: number;
}

const LOWER_UNITS = new Set(["ms", "s", "µs", "us", "ns", "B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "bytes"]);

/** A target says which way is better; else the unit does (a rate per second up, a time or a size down). */
export function betterOf(figure: Pick<BenchFigure, "unit" | "target">): Better {
  const target = figure.target;
  if (target?.on === "value") {
    if (target.max !== undefined && target.min === undefined) return "lower";
    if (target.min !== undefined && target.max === undefined) return "higher";
  }
  const unit = figure.unit.trim();
  if (unit.endsWith("/s") || unit.includes("per CPU") || unit.includes("/CPU")) return "higher";
  const head = unit.split(/[\s/]/)[0] ?? "";
  if (LOWER_UNITS.has(head)) return "lower";
  return "unknown";
}

export function median(values: readonly number[]): number | undefined {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function oriented(better: Better, base: number, head: number): number | undefined {
  if (base === 0 || head === 0) return undefined;
  return better === "lower" ? base / head : head / base;
}

/**
 * One row per figure either side reported, in the order the head reported them (then any only the
 * base had). Rounds are paired by index: round i of the base ran next to round i of the head.
 */
export function compareRuns(base: readonly SideRun[], head: readonly SideRun[]): ComparedFigure[] {
  const keys: { benchmark: string; figure: string }[] = [];
  const seen = new Set<string>();
  for (const side of [head, base])
    for (const run of side)
      for (const [benchmark, figures] of run)
        for (const f of figures) {
          const key = `${benchmark}\u0000${f.name}`;
          if (seen.has(key)) continue;
          seen.add(key);
          keys.push({ benchmark, figure: f.name });
        }
  const find = (run: SideRun | undefined, benchmark: string, name: string) =>
    run?.get(benchmark)?.find((f) => f.name === name);
  return keys.map(({ benchmark, figure }) => {
    const sample =
      head.map((r) => find(r, benchmark, figure)).find((f) => f !== undefined) ??
      (base.map((r) => find(r, benchmark, figure)).find((f) => f !== undefined) as BenchFigure);
    const better = betterOf(sample);
    const values = (side: readonly SideRun[]) =>
      side.map((r) => find(r, benchmark, figure)?.value).filter((v): v is number => v !== undefined);
    const b = median(values(base));
    const h = median(values(head));
    const paired: number[] = [];
    for (let i = 0; i < Math.min(base.length, head.length); i++) {
      const bv = find(base[i], benchmark, figure)?.value;
      const hv = find(head[i], benchmark, figure)?.value;
      const r = bv === undefined || hv === undefined ? undefined : oriented(better, bv, hv);
      if (r !== undefined && Number.isFinite(r)) paired.push(r);
    }
    return {
      benchmark,
      figure,
      unit: sample.unit,
      better,
      base: b,
      head: h,
      ratio: b === undefined || h === undefined ? undefined : oriented(better, b, h),
      spread: paired.length === 0 ? undefined : [Math.min(...paired), Math.max(...paired)],
      rounds: paired.length,
    };
  });
}
