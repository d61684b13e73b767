/**
 * CLI start-up cost, whole process, as a user sees it: `node -e 0` (the floor no Node program
 * can beat), `shoal --help`, and `shoal node list` against a running orchestrator, run in turn
 * in the same rounds (a shuffled order each round) so that machine load hits all three alike.
 * It starts its own `shoal devstack --compute 3` (free ports, a temporary DataDir) and runs the
 * compiled CLI in dist/ through bin/shoal, exactly as a user's shell would.
 *
 * npm run bench:cli (= npm run bench -- --only cli-startup; builds dist/ first when the sources changed)
 *   npm run bench:cli -- --set cli.runs=50
 *
 * Targets (issue 5): `--help` within 100 ms of bare node; `node list` under 250 ms.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./support/free-port.ts";
import { setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { quantile } from "./support/quantile.ts";

const SHOAL = join(import.meta.dirname, "../bin/shoal");
const HELP_TARGET_MS = 100;
const LIST_TARGET_MS = 250;

// The children must not inherit this script's TypeScript loader.
const env: NodeJS.ProcessEnv = { ...process.env };
delete env.NODE_OPTIONS;

interface Case {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** What a correct run prints: a run that failed is not a fast run. */
  readonly expect: string;
  readonly ms: number[];
  readonly cpuMs: number[];
}

/**
 * User + system CPU of this process's reaped children so far (Linux: /proc/self/stat cutime and
 * cstime, in 10 ms ticks), or undefined elsewhere. Wall time on a loaded machine mostly measures
 * the load; CPU time says what the command itself costs.
 */
function childrenCpuMs(): number | undefined {
  if (!existsSync("/proc/self/stat")) return undefined;
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After "pid (comm) ", field 3 (state) is index 0: cutime is field 16, cstime field 17.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

function runOnce(c: Case): void {
  const cpuBefore = childrenCpuMs();
  const start = performance.now();
  const res = spawnSync(c.command, c.args, { env, encoding: "utf8" });
  const ms = performance.now() - start;
  const cpuAfter = childrenCpuMs();
  if (res.status !== 0 || !res.stdout.includes(c.expect)) {
    throw new Error(`${c.name} failed (exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
  }
  c.ms.push(ms);
  if (cpuBefore !== undefined && cpuAfter !== undefined) c.cpuMs.push(cpuAfter - cpuBefore);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

async function startDevstack(dataDir: string): Promise<{ apiPort: number; stop: () => Promise<void> }> {
  const apiPort = await freePort();
  const natsPort = await freePort();
  const child = spawn(
    SHOAL,
    [
      "devstack",
      "--compute",
      "3",
      "-c",
      `DataDir=${dataDir}`,
      "-c",
      "API.Host=127.0.0.1",
      "-c",
      `API.Port=${apiPort}`,
      "-c",
      "Orchestrator.Host=127.0.0.1",
      "-c",
      `Orchestrator.Port=${natsPort}`,
      "-c",
      "Logging.Level=warn",
    ],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  // SIGTERM lets devstack stop its own nats-server; SIGKILL only if it does not within 15s.
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 60_000;
  while (!out.includes("Shoal devstack is running")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop(); // a devstack still starting must not outlive the bench, nor its nats-server
      throw new Error(`devstack did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { apiPort, stop };
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const RUNS = setting(options, "cli.runs", options.quick ? 5 : 30);
  if (!Number.isInteger(RUNS) || RUNS < 5)
    throw new Error(`cli.runs must be a whole number of at least 5, got ${RUNS}`);
  const log = options.log;
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-cli-"));
  const devstack = await startDevstack(dataDir).catch((e: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  });
  try {
    const cases: Case[] = [
      { name: "node -e 0", command: "node", args: ["-e", "0"], expect: "", ms: [], cpuMs: [] },
      { name: "shoal --help", command: SHOAL, args: ["--help"], expect: "Usage: shoal", ms: [], cpuMs: [] },
      {
        name: "shoal node list",
        command: SHOAL,
        args: [
          "node",
          "list",
          "--api-host",
          "127.0.0.1",
          "--api-port",
          String(devstack.apiPort),
          "-c",
          `DataDir=${dataDir}`,
        ],
        expect: "node-3",
        ms: [],
        cpuMs: [],
      },
    ];
    const [bare, help, list] = cases as [Case, Case, Case];
    const node = spawnSync("node", ["-p", "process.version + ' ' + process.execPath"], {
      env,
      encoding: "utf8",
    }).stdout.trim();
    log(`CLI start-up, whole process; ${RUNS} rounds, the three commands in a shuffled order each round; node ${node}`);

    for (const c of cases) runOnce(c); // warm the page cache; not counted
    for (const c of cases) {
      c.ms.length = 0;
      c.cpuMs.length = 0;
    }
    for (let round = 0; round < RUNS; round++) for (const c of shuffle([...cases])) runOnce(c);

    const stats = (samples: readonly number[]) => {
      const sorted = [...samples].sort((a, b) => a - b);
      return {
        min: sorted[0] ?? NaN,
        median: quantile(sorted, 0.5),
        p90: quantile(sorted, 0.9),
        max: sorted.at(-1) ?? NaN,
      };
    };
    const fmt = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;
    const table = (title: string, samples: (c: Case) => readonly number[]) => {
      const base = stats(samples(bare));
      log(
        `\n${title.padEnd(18)}${"min".padStart(10)}${"median".padStart(10)}${"p90".padStart(10)}${"max".padStart(10)}   Δ median / Δ p90 vs node -e 0`,
      );
      for (const c of cases) {
        const s = stats(samples(c));
        const delta =
          c === bare ? "" : `   ${(s.median - base.median).toFixed(1)} / ${(s.p90 - base.p90).toFixed(1)} ms`;
        log(`${c.name.padEnd(18)}${fmt(s.min)}${fmt(s.median)}${fmt(s.p90)}${fmt(s.max)}${delta}`);
      }
    };
    table("wall time", (c) => c.ms);
    if (bare.cpuMs.length > 0) table("CPU (user+sys)", (c) => c.cpuMs);

    // Wall-time medians carry the targets; on a loaded machine the CPU figures say what the commands themselves cost.
    const bareMs = stats(bare.ms).median;
    const note = `median of ${RUNS} shuffled rounds; node -e 0: ${bareMs.toFixed(1)} ms`;
    const figures: BenchFigure[] = [
      { name: "node -e 0 (the floor), wall median", value: bareMs, unit: "ms" },
      {
        name: "shoal --help over node -e 0, wall median",
        value: stats(help.ms).median - bareMs,
        unit: "ms",
        target: { on: "value", max: HELP_TARGET_MS },
        note,
      },
      {
        name: "shoal node list, wall median",
        value: stats(list.ms).median,
        unit: "ms",
        target: { on: "value", max: LIST_TARGET_MS },
        note,
      },
    ];
    if (bare.cpuMs.length > 0) {
      const bareCpu = stats(bare.cpuMs).median;
      figures.push(
        { name: "shoal --help over node -e 0, CPU median", value: stats(help.cpuMs).median - bareCpu, unit: "ms" },
        { name: "shoal node list, CPU median", value: stats(list.cpuMs).median, unit: "ms" },
      );
    }
    return { figures, parameters: { rounds: RUNS, node } };
  } finally {
    await devstack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
