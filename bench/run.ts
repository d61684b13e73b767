/**
 * The benchmark suite: runs every benchmark under bench/ (each `bench/<name>.ts` that exports
 * `run`, see bench-result.ts), one after the other, prints one table and writes
 * bench/results/<name>.json.
 *
 *   npm run bench                              every benchmark
 *   npm run bench -- --only heartbeat          one (repeat --only, or comma-separate, for several)
 *   npm run bench -- --name before-the-heap    the results file's name (default: date and git commit)
 *   npm run bench -- --quick                   smaller, shorter runs: checks the benchmarks work, measures nothing
 *   npm run bench -- --set heartbeat.nodes=500 a knob of one benchmark (see docs/performance.md)
 *   npm run bench -- --list                    the benchmarks found
 *
 * Benchmarks, not tests: nothing here runs in CI. Exit status 1 when a benchmark failed to run
 * (not when a target is missed: that is a result, and the table says so).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, totalmem } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import {
  isBenchResult,
  meetsTarget,
  ratioOf,
  type BenchFigure,
  type BenchModule,
  type BenchOptions,
  type BenchTarget,
} from "./bench-result.ts";

const BENCH_DIR = import.meta.dirname;
const RESULTS_DIR = join(BENCH_DIR, "results");
const NOT_BENCHMARKS = new Set(["run", "bench-result", "compare"]);

const { values } = parseArgs({
  options: {
    only: { type: "string", multiple: true },
    name: { type: "string" },
    quick: { type: "boolean", default: false },
    set: { type: "string", multiple: true },
    list: { type: "boolean", default: false },
  },
});

const settings: Record<string, string> = {};
for (const entry of values.set ?? []) {
  const eq = entry.indexOf("=");
  if (eq <= 0) throw new Error(`--set ${entry}: expected key=value`);
  settings[entry.slice(0, eq)] = entry.slice(eq + 1);
}

function git(...args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { cwd: BENCH_DIR, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}

/** Top-level bench/*.ts only: helpers live in subfolders (bench/support/). */
const available = readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
  .map((f) => basename(f, ".ts"))
  .filter((n) => !NOT_BENCHMARKS.has(n))
  .sort();

if (values.list) {
  console.log(available.join("\n"));
  process.exit(0);
}

const only = (values.only ?? [])
  .flatMap((o) => o.split(","))
  .map((o) => o.trim())
  .filter((o) => o !== "");
for (const name of only) {
  if (!available.includes(name))
    throw new Error(`--only ${name}: no bench/${name}.ts (there are: ${available.join(", ")})`);
}
const selected = only.length > 0 ? available.filter((n) => only.includes(n)) : available;

const commit = git("rev-parse", "--short", "HEAD") ?? "nogit";
const dirty = (git("status", "--porcelain", "--untracked-files=no") ?? "") !== "";
const startedAt = new Date();
const resultName = values.name ?? `${startedAt.toISOString().slice(0, 10)}-${commit}${dirty ? "-dirty" : ""}`;
if (!/^[A-Za-z0-9._-]+$/.test(resultName)) throw new Error(`--name ${resultName}: use letters, digits, . _ -`);

interface Outcome {
  readonly benchmark: string;
  readonly ok: boolean;
  readonly seconds: number;
  readonly figures: readonly BenchFigure[];
  readonly parameters?: Readonly<Record<string, number | string | boolean>>;
  readonly error?: string;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const options: BenchOptions = { quick: values.quick, settings, log };
const outcomes: Outcome[] = [];

for (const benchmark of selected) {
  log(`\n▶ ${benchmark}${values.quick ? " (quick)" : ""}`);
  const started = performance.now();
  try {
    const module = (await import(pathToFileURL(join(BENCH_DIR, `${benchmark}.ts`)).href)) as Partial<BenchModule>;
    if (typeof module.run !== "function") {
      log(`  bench/${benchmark}.ts exports no run(options); skipped`);
      continue;
    }
    const result = await module.run(options);
    const figures: BenchFigure[] = isBenchResult(result)
      ? [...result.figures]
      : Object.entries(result).map(([name, value]) => ({
          name,
          value: typeof value === "number" ? value : NaN,
          unit: "",
          ...(typeof value === "string" ? { note: value } : {}),
        }));
    const parameters = isBenchResult(result) ? result.parameters : undefined;
    outcomes.push({
      benchmark,
      ok: true,
      seconds: (performance.now() - started) / 1000,
      figures,
      ...(parameters ? { parameters } : {}),
    });
  } catch (e) {
    const error = e instanceof Error ? (e.stack ?? e.message) : String(e);
    log(`  ${benchmark} failed: ${error}`);
    outcomes.push({
      benchmark,
      ok: false,
      seconds: (performance.now() - started) / 1000,
      figures: [],
      error: e instanceof Error ? e.message : String(e),
    });
  }
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "—";
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function formatTarget(target: BenchTarget | undefined, unit: string): string {
  if (target === undefined) return "";
  const suffix = target.on === "ratio" ? " ×" : unit === "" ? "" : ` ${unit}`;
  const parts = [];
  if (target.min !== undefined) parts.push(`≥ ${formatNumber(target.min)}${suffix}`);
  if (target.max !== undefined) parts.push(`≤ ${formatNumber(target.max)}${suffix}`);
  return parts.join(", ");
}

const header = ["benchmark", "figure", "value", "unit", "baseline", "ratio", "target", "result"];
const rows: string[][] = [];
for (const outcome of outcomes) {
  if (!outcome.ok) {
    rows.push([
      outcome.benchmark,
      "(failed to run)",
      "",
      "",
      "",
      "",
      "",
      `ERROR: ${outcome.error?.split("\n")[0] ?? ""}`,
    ]);
    continue;
  }
  for (const figure of outcome.figures) {
    const ratio = ratioOf(figure);
    const met = meetsTarget(figure);
    rows.push([
      outcome.benchmark,
      figure.name,
      Number.isNaN(figure.value) && figure.note !== undefined ? figure.note : formatNumber(figure.value),
      figure.unit,
      figure.baseline ? `${formatNumber(figure.baseline.value)} (${figure.baseline.name})` : "",
      // Three decimals: 0.797 must not read as the 0.80 it misses.
      ratio === undefined ? "" : `${ratio.toFixed(3)} ×`,
      formatTarget(figure.target, figure.unit),
      met === undefined ? "" : met ? "pass" : "FAIL",
    ]);
  }
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
const line = (cells: readonly string[]) =>
  cells
    .map((c, i) => (i === 2 || i === 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
    .join("  ")
    .trimEnd();
console.log(`\nShoal benchmarks — ${resultName}${values.quick ? " (quick: not a measurement)" : ""}`);
console.log(line(header));
console.log(line(widths.map((w) => "-".repeat(w))));
for (const row of rows) console.log(line(row));

mkdirSync(RESULTS_DIR, { recursive: true });
const file = join(RESULTS_DIR, `${resultName}.json`);
const cpuList = cpus();
const saved = {
  name: resultName,
  startedAt: startedAt.toISOString(),
  git: { commit, dirty },
  quick: values.quick,
  settings,
  machine: {
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model ?? "unknown",
    memoryBytes: totalmem(),
    loadAverageAtEnd: loadavg(),
    platform: `${platform()} ${release()} ${arch()}`,
    node: process.version,
  },
  results: outcomes.map((o) => ({
    ...o,
    figures: o.figures.map((f) => ({
      ...f,
      ...(ratioOf(f) === undefined ? {} : { ratio: ratioOf(f) }),
      ...(meetsTarget(f) === undefined ? {} : { pass: meetsTarget(f) }),
    })),
  })),
};
writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`);
console.log(`\nresults: ${file}`);
if (outcomes.some((o) => !o.ok)) process.exitCode = 1;
