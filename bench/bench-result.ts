/**
 * What a benchmark module exports and returns. `npm run bench` (bench/run.ts) imports every
 * `bench/*.ts` that exports `run`, calls it, and prints and saves what it returns.
 *
 *   export async function run(options: BenchOptions): Promise<BenchResult>
 *
 * A looser `Promise<Record<string, number | string>>` is accepted too: each entry becomes a row.
 */
import { pathToFileURL } from "node:url";

/** What a figure must reach: on its value (`≤ 20 ms`) or on its ratio to the baseline (`≥ 0.8 ×`). */
export interface BenchTarget {
  readonly on: "value" | "ratio";
  readonly min?: number;
  readonly max?: number;
}

export interface BenchFigure {
  /** As in docs/performance.md's targets table. */
  readonly name: string;
  readonly value: number;
  /** `/s`, `ms`, `MB`, `events`, … */
  readonly unit: string;
  /** The natural baseline measured in the same run (same machine, same load), when the figure has one. */
  readonly baseline?: { readonly name: string; readonly value: number };
  /** value / baseline.value, unless the benchmark says otherwise. */
  readonly ratio?: number;
  readonly target?: BenchTarget;
  /** Anything a reader needs beside the number (spread across rounds, sample size). */
  readonly note?: string;
}

export interface BenchResult {
  readonly figures: readonly BenchFigure[];
  /** The setup measured (node counts, durations, rounds), saved with the result. */
  readonly parameters?: Readonly<Record<string, number | string | boolean>>;
}

export type LooseBenchResult = Readonly<Record<string, number | string>>;

export interface BenchOptions {
  /** A smaller, shorter run (a smoke test of the benchmark itself, not a measurement). */
  readonly quick: boolean;
  /** `--set key=value` from the command line, for the benchmark to read its own knobs. */
  readonly settings: Readonly<Record<string, string>>;
  /** Progress lines go here (stderr), so the table on stdout stays clean. */
  readonly log: (line: string) => void;
}

export type BenchModule = { run(options: BenchOptions): Promise<BenchResult | LooseBenchResult> };

export function isBenchResult(result: BenchResult | LooseBenchResult): result is BenchResult {
  return Array.isArray((result as BenchResult).figures);
}

/** Whether the figure meets its target; undefined without one (or without the ratio a ratio target needs). */
export function meetsTarget(figure: BenchFigure): boolean | undefined {
  const target = figure.target;
  if (target === undefined) return undefined;
  const measured = target.on === "ratio" ? ratioOf(figure) : figure.value;
  if (measured === undefined || !Number.isFinite(measured)) return undefined;
  return (target.min === undefined || measured >= target.min) && (target.max === undefined || measured <= target.max);
}

export function ratioOf(figure: BenchFigure): number | undefined {
  if (figure.ratio !== undefined) return figure.ratio;
  if (figure.baseline === undefined || figure.baseline.value === 0) return undefined;
  return figure.value / figure.baseline.value;
}

/** A number read from `--set`, or the default. */
export function setting(options: BenchOptions, key: string, fallback: number): number {
  const raw = options.settings[key];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`--set ${key}=${raw}: expected a number`);
  return value;
}

/**
 * A benchmark run on its own (`npx tsx bench/<name>.ts a b`) rather than by the suite: its
 * positional arguments become the named settings, in order, and the result is printed as JSON.
 */
export async function runStandalone(
  moduleUrl: string,
  run: BenchModule["run"],
  positional: readonly string[],
): Promise<void> {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? "").href) return;
  const settings: Record<string, string> = {};
  const args = process.argv.slice(2);
  // `--quick` means what it means in the suite (small and short); the rest are positional knobs.
  const quick = args.includes("--quick");
  args
    .filter((a) => a !== "--quick")
    .forEach((value, i) => {
      const key = positional[i];
      if (key !== undefined) settings[key] = value;
    });
  const result = await run({ quick, settings, log: (line) => process.stderr.write(`${line}\n`) });
  console.log(JSON.stringify(result, null, 2));
}
