/**
 * Before and after in the same run: the benchmarks of this checkout against those of another
 * commit, in alternating rounds (base, head, then head, base, …) on the same machine, so that both
 * sides meet the same load. The base is checked out into a git worktree of this run's own
 * (/tmp/shoal-bench-base-<sha>-<random>: its own benchmarks and its own build, sharing this
 * checkout's node_modules), run with its own bench/run.ts, and removed at the end (--keep leaves
 * it and prints where); each round's figures are paired by name.
 *
 *   npm run bench:compare -- --base main                          the default set, 3 rounds
 *   npm run bench:compare -- --base v0.9 --only placement --rounds 5
 *   npm run bench:compare -- --base HEAD~3 --set heartbeat.nodes=2000 --quick
 *
 * Prints one row per figure: each side's median over the rounds and a ratio oriented so that above
 * 1 is better (head/base for a rate, base/head for a time or a size), with the spread of the
 * paired rounds' ratios; writes bench/results/compare-<base>-<head>.json. Exit status 1 when a run
 * failed; a ratio under --floor is a result (marked), not an error.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BenchFigure } from "./bench-result.ts";
import { addBaseWorktree, type BaseWorktree } from "./support/base-worktree.ts";
import { compareRuns, type ComparedFigure, type SideRun } from "./support/compare-figures.ts";

/** The figures a change to the core must not make worse: heartbeat, appends, restart, rebuild, node list, placement. */
const DEFAULT_SET = ["heartbeat", "actor-appends", "store-append", "restart", "store-read", "node-list", "placement"];

const HEAD_ROOT = resolve(import.meta.dirname, "..");

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    only: { type: "string", multiple: true },
    rounds: { type: "string", default: "3" },
    set: { type: "string", multiple: true },
    quick: { type: "boolean", default: false },
    floor: { type: "string", default: "0.95" },
    keep: { type: "boolean", default: false },
  },
});

function fail(message: string): never {
  process.stderr.write(`bench:compare: ${message}\n`);
  process.exit(2);
}

if (values.base === undefined) fail("--base <git ref> is required (the commit to compare this checkout against)");
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail(`--rounds ${values.rounds}: a whole number, 1 to 20`);
const floor = Number(values.floor);
if (!Number.isFinite(floor) || floor <= 0) fail(`--floor ${values.floor}: a positive number`);
const only = (values.only ?? []).flatMap((o) => o.split(",")).map((o) => o.trim());
const selected = only.filter((o) => o !== "").length > 0 ? only.filter((o) => o !== "") : DEFAULT_SET;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

let baseCommit: string;
try {
  baseCommit = git(HEAD_ROOT, "rev-parse", "--verify", `${values.base}^{commit}`);
} catch {
  fail(`--base ${values.base}: not a commit of this repository`);
}
const headCommit = git(HEAD_ROOT, "rev-parse", "HEAD");
const headDirty = git(HEAD_ROOT, "status", "--porcelain", "--untracked-files=no") !== "";
const short = (c: string) => c.slice(0, 7);
const headLabel = `${short(headCommit)}${headDirty ? "-dirty" : ""}`;

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The base checked out into a directory of this run's own, with this checkout's node_modules. */
function baseWorktree(): BaseWorktree {
  const worktree = addBaseWorktree(HEAD_ROOT, baseCommit, { nodeModules: join(HEAD_ROOT, "node_modules") });
  log(`checked out ${short(baseCommit)} into ${worktree.dir}`);
  const deps = (root: string) => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>;
    return JSON.stringify([pkg.dependencies, pkg.devDependencies]);
  };
  if (deps(worktree.dir) !== deps(HEAD_ROOT))
    log(`note: ${short(baseCommit)} declares other dependencies; it runs with this checkout's node_modules`);
  return worktree;
}

/** The side's run under way: an interrupted compare stops it before removing the checkout it runs in. */
let running: { readonly child: ChildProcess; readonly exited: Promise<number> } | undefined;

function run(cwd: string, command: string, args: readonly string[], stdout: "inherit" | "ignore"): Promise<number> {
  const child = spawn(command, args, { cwd, stdio: ["ignore", stdout, "inherit"] });
  const exited = new Promise<number>((done, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
  running = { child, exited };
  return exited.finally(() => {
    if (running?.child === child) running = undefined;
  });
}

interface SavedRun {
  readonly results: readonly { readonly benchmark: string; readonly ok: boolean; readonly figures: BenchFigure[] }[];
}

/** One side's bench/run.ts over the selected benchmarks; its figures, and whether every benchmark ran. */
async function runSide(root: string, name: string): Promise<{ run: SideRun; ok: boolean; saved: SavedRun }> {
  const args = ["bench/run.ts", "--name", name];
  for (const b of selected) args.push("--only", b);
  for (const s of values.set ?? []) args.push("--set", s);
  if (values.quick) args.push("--quick");
  const code = await run(root, join(HEAD_ROOT, "node_modules", ".bin", "tsx"), args, "ignore");
  const file = join(root, "bench", "results", `${name}.json`);
  if (!existsSync(file)) throw new Error(`${name}: bench/run.ts exited ${code} without its results file`);
  const saved = JSON.parse(readFileSync(file, "utf8")) as SavedRun;
  rmSync(file);
  const figures = new Map<string, readonly BenchFigure[]>();
  for (const r of saved.results) if (r.ok) figures.set(r.benchmark, r.figures);
  return { run: figures, ok: code === 0 && saved.results.every((r) => r.ok), saved };
}

const fmt = (v: number | undefined): string =>
  v === undefined || !Number.isFinite(v)
    ? "—"
    : v.toLocaleString("en", { maximumFractionDigits: Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 1 ? 2 : 3 });

function table(rows: readonly ComparedFigure[]): string {
  const header = ["benchmark", "figure", "unit", "base", "head", "ratio", "rounds' ratios", "better"];
  const cells = rows.map((r) => [
    r.benchmark,
    r.figure,
    r.unit,
    fmt(r.base),
    fmt(r.head),
    r.ratio === undefined ? "" : `${r.ratio.toFixed(3)} ×${r.better !== "unknown" && r.ratio < floor ? " ▼" : ""}`,
    r.spread === undefined ? "" : `${r.spread[0].toFixed(2)}–${r.spread[1].toFixed(2)} (${r.rounds})`,
    r.better,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: readonly string[]) =>
    c
      .map((s, i) => (i >= 3 && i <= 5 ? s.padStart(widths[i] as number) : s.padEnd(widths[i] as number)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

const baseCheckout = baseWorktree();
const baseRoot = baseCheckout.dir;
const leaveBase = () => {
  if (!values.keep) return baseCheckout.remove();
  log(`kept the base checkout: ${baseRoot} (git worktree remove --force ${baseRoot} when done)`);
};
// Interrupted (Ctrl-C, a job's timeout): the side under way is stopped, then the checkout goes as at the end of a run.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const)
  process.once(signal, () => {
    const stopping = running;
    stopping?.child.kill(signal);
    const timer = setTimeout(() => stopping?.child.kill("SIGKILL"), 10_000);
    void (stopping?.exited ?? Promise.resolve(0))
      .catch(() => 0)
      .then(() => {
        clearTimeout(timer);
        leaveBase();
        process.exit(code);
      });
  });
try {
  for (const root of [baseRoot, HEAD_ROOT]) {
    if (existsSync(join(root, "scripts", "build.mjs")))
      await run(root, process.execPath, ["scripts/build.mjs", "--if-stale"], "ignore");
  }
  const stamp = new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const base: SideRun[] = [];
  const head: SideRun[] = [];
  const saved: { round: number; side: "base" | "head"; run: SavedRun }[] = [];
  let allOk = true;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (["base", "head"] as const) : (["head", "base"] as const);
    for (const side of order) {
      log(`▶ round ${round + 1}/${rounds}: ${side} (${side === "base" ? short(baseCommit) : headLabel})`);
      const result = await runSide(side === "base" ? baseRoot : HEAD_ROOT, `compare-${stamp}-${side}-${round}`);
      (side === "base" ? base : head).push(result.run);
      saved.push({ round, side, run: result.saved });
      allOk &&= result.ok;
    }
  }
  const rows = compareRuns(base, head);
  console.log(
    `\nShoal benchmarks — ${headLabel} against ${short(baseCommit)}, ${rounds} round(s)` +
      `${values.quick ? " (quick: not a measurement)" : ""}; ratio > 1: better, ▼ below ${floor}`,
  );
  console.log(table(rows));
  const dir = join(HEAD_ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `compare-${short(baseCommit)}-${headLabel}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ base: baseCommit, head: headCommit, headDirty, rounds, quick: values.quick, rows, runs: saved }, null, 2)}\n`,
  );
  console.log(`\nresults: ${file}`);
  if (!allOk) process.exitCode = 1;
} finally {
  leaveBase();
}
