import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import { reachableHost, urlHost } from "../net/reachable-host.ts";
import { dieWithParent, findExecutable, parentWatchdog } from "./die-with-parent.ts";
import { DEFAULT_RESTART_BACKOFF, RestartBackoff, type RestartBackoffOptions } from "./restart-backoff.ts";

export class NatsServerError extends Error {
  override readonly name = "NatsServerError";
}

export interface EmbeddedNatsOptions {
  readonly host: string;
  readonly port: number;
  /** JetStream data and the pid file live here. */
  readonly dir: string;
  readonly logger: Logger;
  readonly binary?: string;
  readonly readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. */
  readonly stopTimeoutMs?: number;
  readonly restartBackoff?: RestartBackoffOptions;
  /**
   * A complete nats-server config (listen address, pid file, JetStream, accounts and users) that
   * the server reads instead of command-line flags, and re-reads on `reload()`. Without it the
   * server is open to anyone (tests use that to stand in for an external NATS).
   */
  readonly configFile?: string;
  /** A watchdog process even where setpriv could tie the server to Shoal (tests of the fallback). */
  readonly alwaysWatchdog?: boolean;
  /** Set in the server's environment on top of Shoal's own (its Go runtime's GOGC, GOMEMLIMIT). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Whether the child is serving; `reason` says why not (for logs, readiness and the no-blame rule). */
export type EmbeddedNatsState =
  | { readonly running: true; readonly pid: number; readonly since: number }
  | { readonly running: false; readonly reason: string; readonly since: number };

const STDERR_TAIL = 4096;
const DEFAULT_READY_TIMEOUT_MS = 15_000;
const DEFAULT_STOP_TIMEOUT_MS = 5_000;
const NOT_FOUND =
  "nats-server was not found on PATH; install it (apt-get install nats-server) or set Orchestrator.NATS.URL to an external NATS";

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * A previous orchestrator killed with -9 leaves its nats-server child running on our store
 * directory and port. Take it down, but only if the pid file's process is that nats-server.
 */
async function stopLeftover(pidFile: string, dir: string, logger: Logger): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  let cmdline = "";
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return;
  }
  if (!cmdline.includes("nats-server") || !cmdline.includes(dir)) return;
  logger.warn({ pid }, "stopping a nats-server left running by a previous Shoal");
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) process.kill(pid, "SIGKILL");
  for (let i = 0; i < 20 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
}

/** Where the server keeps its pid file and JetStream data under its directory. */
export function embeddedNatsPaths(dir: string): { pidFile: string; storeDir: string } {
  return { pidFile: join(dir, "nats-server.pid"), storeDir: join(dir, "jetstream") };
}

/**
 * The orchestrator's own nats-server (with JetStream), as Bacalhau's orchestrator hosts NATS.
 * Supervised: if the child dies, it is started again the same way (same port, same data) after
 * a backoff, until stop().
 */
export class EmbeddedNatsServer {
  readonly url: string;
  readonly pidFile: string;
  private child: ChildProcess | undefined;
  private current: EmbeddedNatsState;
  private readyAt = 0;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly backoff: RestartBackoff;
  private readonly listeners = new Set<(state: EmbeddedNatsState) => void>();
  private restartCount = 0;
  /** Why the running child is being killed to be started again (restartStuck), for the exit's log. */
  private killedBecause: string | undefined;

  private constructor(private readonly options: EmbeddedNatsOptions) {
    const { host, port, dir } = options;
    this.url = `nats://${urlHost(reachableHost(host))}:${port}`;
    this.pidFile = embeddedNatsPaths(dir).pidFile;
    this.backoff = new RestartBackoff(options.restartBackoff ?? DEFAULT_RESTART_BACKOFF);
    this.current = { running: false, reason: "not started", since: Date.now() };
  }

  static async start(options: EmbeddedNatsOptions): Promise<EmbeddedNatsServer> {
    const { host, port, dir, logger } = options;
    mkdirSync(dir, { recursive: true });
    const server = new EmbeddedNatsServer(options);
    await stopLeftover(server.pidFile, dir, logger);
    if (!(await portFree(host, port))) {
      throw new NatsServerError(
        `Orchestrator.Port ${port} on ${host} is already in use; choose another with -c Orchestrator.Port=<port>`,
      );
    }
    await server.launch();
    logger.info({ url: server.url, pid: server.pid }, "embedded nats-server ready");
    return server;
  }

  /**
   * How the server is started: the one place its command line is built. The first start and
   * every restart call it, so a change here (a config file, credentials) holds across restarts.
   */
  private commandLine(): {
    readonly binary: string;
    readonly args: readonly string[];
    readonly env: NodeJS.ProcessEnv;
  } {
    const { host, port, dir, configFile } = this.options;
    return {
      binary: this.options.binary ?? "nats-server",
      args: configFile
        ? ["-c", configFile]
        : [
            "-a",
            host,
            "-p",
            String(port),
            "-js",
            "-sd",
            embeddedNatsPaths(dir).storeDir,
            "-P",
            this.pidFile,
            "-n",
            `shoal-${port}`,
          ],
      env: { ...process.env, ...this.options.env },
    };
  }

  get state(): EmbeddedNatsState {
    return this.current;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Restarts after unexpected exits since start. */
  get restarts(): number {
    return this.restartCount;
  }

  /** Called on every change of state (exited, restarted); returns a function that unsubscribes. */
  onStateChange(listener: (state: EmbeddedNatsState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setState(state: EmbeddedNatsState): void {
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }

  /** Spawns the child and resolves once it is ready; rejects (the child killed) if it is not. */
  private async launch(): Promise<void> {
    const { binary, args, env } = this.commandLine();
    const { port } = this.options;
    const readyTimeoutMs = this.options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    // Its own process group: a Ctrl-C (SIGINT to the terminal's foreground group) reaches Shoal,
    // which stops the server itself; the server dying first would read as a crash and be restarted.
    // And killed with Shoal where the platform allows (dieWithParent): a `kill -9` of Shoal must not
    // leave it serving, holding the port and the JetStream store.
    const resolved = findExecutable(binary);
    if (resolved === undefined) throw new NatsServerError(NOT_FOUND);
    const command =
      this.options.alwaysWatchdog === true
        ? { command: resolved, args, wrapped: false }
        : dieWithParent(resolved, args);
    const child = spawn(command.command, [...command.args], {
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
      env,
    });
    this.child = child;
    if (!command.wrapped && child.pid !== undefined) {
      const watchdog = parentWatchdog(child.pid);
      child.once("exit", () => watchdog.stop());
    }
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: NatsServerError) => {
        clearTimeout(timer);
        child.stderr?.off("data", onReady);
        child.off("exit", onEarlyExit);
        child.off("error", onError);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        settle(
          new NatsServerError(`nats-server did not become ready within ${readyTimeoutMs}ms: ${stderr.slice(-500)}`),
        );
      }, readyTimeoutMs);
      const onReady = () => {
        if (stderr.includes("Server is ready")) settle();
      };
      const onEarlyExit = (code: number | null, signal: NodeJS.Signals | null) => {
        const inUse = /address already in use/i.test(stderr);
        settle(
          new NatsServerError(
            inUse
              ? `Orchestrator.Port ${port} is already in use`
              : `nats-server exited (${signal ?? code}): ${stderr.slice(-500)}`,
          ),
        );
      };
      const onError = (err: NodeJS.ErrnoException) =>
        settle(new NatsServerError(err.code === "ENOENT" ? NOT_FOUND : `could not start nats-server: ${err.message}`));
      child.stderr?.on("data", onReady);
      child.once("exit", onEarlyExit);
      child.once("error", onError);
    });
    this.readyAt = Date.now();
    child.once("exit", (code, signal) => this.onExit(child, code, signal, stderr));
    // A signal that cannot be delivered is reported as an 'error' event, which must not crash Shoal.
    child.on("error", (err) => this.options.logger.warn({ err, pid: child.pid }, "nats-server child process error"));
    this.setState({ running: true, pid: child.pid ?? 0, since: this.readyAt });
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
    if (child !== this.child || this.stopping) return;
    this.child = undefined;
    const uptimeMs = Date.now() - this.readyAt;
    const delay = this.backoff.next(uptimeMs);
    const killedBecause = this.killedBecause;
    this.killedBecause = undefined;
    if (killedBecause === undefined) {
      this.options.logger.error(
        { pid: child.pid, code, signal, uptimeMs, restartInMs: delay, stderr: stderr.slice(-1000) },
        "embedded nats-server exited unexpectedly; restarting it",
      );
    } else
      this.options.logger.warn(
        { pid: child.pid, signal, restartInMs: delay, reason: killedBecause },
        "stopped the embedded nats-server to start it again",
      );
    const why =
      killedBecause === undefined
        ? `nats-server exited (${signal ?? `code ${code}`})`
        : `nats-server stopped: ${killedBecause}`;
    this.setState({ running: false, reason: `${why}; restarting it`, since: Date.now() });
    this.scheduleRestart(delay);
  }

  private scheduleRestart(delayMs: number): void {
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart();
    }, delayMs);
  }

  private async restart(): Promise<void> {
    if (this.stopping) return;
    this.restartCount++;
    try {
      await this.launch();
    } catch (e) {
      if (this.stopping) return;
      this.child = undefined;
      const delay = this.backoff.next(0);
      const reason = e instanceof Error ? e.message : String(e);
      this.options.logger.error(
        { reason, restartInMs: delay, restarts: this.restartCount },
        "could not restart the embedded nats-server; trying again",
      );
      this.setState({ running: false, reason: `nats-server could not be restarted: ${reason}`, since: Date.now() });
      this.scheduleRestart(delay);
      return;
    }
    if (this.stopping) return;
    this.options.logger.warn({ pid: this.pid, restarts: this.restartCount }, "embedded nats-server restarted");
  }

  /**
   * Makes the server re-read its config file (SIGHUP, what `nats-server --signal reload` sends).
   * Only once it is serving: a SIGHUP before nats-server handles it would kill the child, and a
   * restart reads the current file anyway.
   */
  reload(): void {
    if (this.current.running) this.child?.kill("SIGHUP");
  }

  /**
   * Stops the running child to start it again as after a crash: for a server that still answers
   * but whose JetStream is stuck (nats-server 2.9 can deadlock a stream after a write failed on a
   * full disk, and only a new process frees it). SIGTERM, then SIGKILL if it has not exited in
   * time: a stuck JetStream can hold up its own shutdown.
   */
  restartStuck(reason: string): void {
    const child = this.child;
    if (
      this.stopping ||
      !this.current.running ||
      child === undefined ||
      exited(child) ||
      this.killedBecause !== undefined
    )
      return;
    this.killedBecause = reason;
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      if (exited(child)) return;
      this.options.logger.warn({ pid: child.pid }, "nats-server did not exit after SIGTERM; killing it");
      child.kill("SIGKILL");
    }, this.options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS);
    timer.unref();
    child.once("exit", () => clearTimeout(timer));
  }

  /** Ends supervision, then stops the child: SIGTERM (and SIGCONT), and SIGKILL if it has not exited in time. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    this.listeners.clear();
    const child = this.child;
    if (!child || exited(child)) return;
    const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    // As systemd does: a stopped (SIGSTOP) server could not act on the SIGTERM until continued.
    child.kill("SIGCONT");
    const stopTimeoutMs = this.options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    const timer = setTimeout(() => {
      this.options.logger.warn({ pid: child.pid, stopTimeoutMs }, "nats-server did not exit after SIGTERM; killing it");
      child.kill("SIGKILL");
    }, stopTimeoutMs);
    await done;
    clearTimeout(timer);
  }
}
