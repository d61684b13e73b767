import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { childEnv } from "./child-env.ts";
import type { LogLine } from "./unexpected-errors.ts";

const SHOAL = join(import.meta.dirname, "../../bin/shoal");
const READY = "is running.";

/** One `shoal serve` process's life, for the figures. */
export interface Incarnation {
  readonly run: number;
  readonly readyMs: number;
  /** Date.now() when it printed that it is running. */
  readonly readyAt: number;
  /** How it ended: "kill -9", "SIGTERM" (with how long the clean stop took), or how it crashed. */
  ended?: string;
  stopMs?: number;
}

/**
 * `shoal serve` started as a user starts it (bin/shoal, its own process, its embedded nats-server),
 * on the same DataDir and ports at every start, with JSON logs. Every stderr line at pino level 50
 * or above, and every stderr line that is not JSON (a crash's stack), is kept for the log check;
 * an exit the soak did not ask for is kept as well.
 */
export class SoakOrchestrator {
  readonly errorLines: LogLine[] = [];
  readonly unexpectedExits: string[] = [];
  readonly incarnations: Incarnation[] = [];
  /** Warning messages (pino level 40) and how often each came: not checked, printed to help read a failure. */
  readonly warnings = new Map<string, number>();
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly dataDir: string,
    private readonly settings: Readonly<Record<string, string | number>>,
    private readonly log: (line: string) => void,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts it and resolves once it printed that it is running; a start that fails throws with its output. */
  async start(timeoutMs: number): Promise<Incarnation> {
    const run = this.incarnations.length + 1;
    const config = { DataDir: this.dataDir, "Logging.Mode": "json", ...this.settings };
    const args = ["serve", ...Object.entries(config).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
    const t0 = performance.now();
    const child = spawn(SHOAL, args, { env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    this.stopping = false;
    let stdout = "";
    let tail = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    let partial = "";
    child.stderr?.on("data", (d: Buffer) => {
      tail = (tail + d.toString()).slice(-4000);
      partial += d.toString();
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) this.readLogLine(run, line);
    });
    this.exited = new Promise<void>((resolve) =>
      child.once("exit", (code, signal) => {
        if (partial !== "") this.readLogLine(run, partial);
        if (!this.stopping) {
          const how = `orchestrator run ${run} (pid ${child.pid}) exited on its own: code ${code}, signal ${signal}`;
          this.unexpectedExits.push(how);
          this.log(`  !! ${how}`);
        }
        resolve();
      }),
    );
    const deadline = Date.now() + timeoutMs;
    while (!stdout.includes(READY)) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        this.stopping = true;
        child.kill("SIGKILL");
        await this.exited;
        throw new Error(`shoal serve (run ${run}) did not get ready within ${timeoutMs} ms:\n${stdout}\n${tail}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const incarnation: Incarnation = { run, readyMs: performance.now() - t0, readyAt: Date.now() };
    this.incarnations.push(incarnation);
    return incarnation;
  }

  private readLogLine(run: number, line: string): void {
    if (line.trim() === "") return;
    let record: { level?: unknown; msg?: unknown } | undefined;
    try {
      record = JSON.parse(line) as { level?: unknown; msg?: unknown };
    } catch {
      record = undefined;
    }
    if (record === undefined || typeof record !== "object" || record === null) {
      this.errorLines.push({ run, level: undefined, msg: line, line });
      return;
    }
    const level = typeof record.level === "number" ? record.level : undefined;
    if (level !== undefined && level >= 50) this.errorLines.push({ run, level, msg: String(record.msg ?? ""), line });
    else if (level === 40) {
      const msg = String(record.msg ?? "");
      this.warnings.set(msg, (this.warnings.get(msg) ?? 0) + 1);
    }
  }

  /** For a signal handler: at once, no waiting. */
  killNow(): void {
    this.stopping = true;
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  /** kill -9: no clean stop at all (its nats-server goes with it). */
  async kill9(): Promise<void> {
    await this.end("SIGKILL", "kill -9");
  }

  /** SIGTERM, and the time its clean stop took; SIGKILL after `graceMs`, which the soak reports. */
  async terminate(graceMs = 30_000): Promise<number> {
    return this.end("SIGTERM", "SIGTERM", graceMs);
  }

  private async end(signal: NodeJS.Signals, how: string, graceMs = 30_000): Promise<number> {
    const child = this.child;
    const incarnation = this.incarnations.at(-1);
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return 0;
    this.stopping = true;
    const t0 = performance.now();
    child.kill(signal);
    let forced = false;
    const timer = setTimeout(() => {
      forced = true;
      child.kill("SIGKILL");
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
    const ms = performance.now() - t0;
    if (incarnation) {
      incarnation.ended = forced ? `${how}, then SIGKILL after ${graceMs} ms` : how;
      incarnation.stopMs = ms;
    }
    if (forced) this.unexpectedExits.push(`orchestrator run ${incarnation?.run} outlived ${how} by ${graceMs} ms`);
    return ms;
  }
}
