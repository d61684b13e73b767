import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";

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
  /**
   * A complete nats-server config (listen address, pid file, JetStream, accounts and users) that
   * the server reads instead of command-line flags, and re-reads on `reload()`. Without it the
   * server is open to anyone (tests use that to stand in for an external NATS).
   */
  readonly configFile?: string;
}

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

/** The orchestrator's own nats-server (with JetStream), as Bacalhau's orchestrator hosts NATS. */
export class EmbeddedNatsServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(options: EmbeddedNatsOptions): Promise<EmbeddedNatsServer> {
    const { host, port, dir, logger } = options;
    const binary = options.binary ?? "nats-server";
    mkdirSync(dir, { recursive: true });
    const { pidFile, storeDir } = embeddedNatsPaths(dir);
    await stopLeftover(pidFile, dir, logger);
    if (!(await portFree(host, port))) {
      throw new NatsServerError(`Orchestrator.Port ${port} on ${host} is already in use; choose another with -c Orchestrator.Port=<port>`);
    }
    const args = options.configFile
      ? ["-c", options.configFile]
      : ["-a", host, "-p", String(port), "-js", "-sd", storeDir, "-P", pidFile, "-n", `shoal-${port}`];
    const child = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
    const connectHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
    const url = `nats://${connectHost}:${port}`;

    await new Promise<void>((resolve, reject) => {
      let stderr = "";
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new NatsServerError(`nats-server did not become ready within ${options.readyTimeoutMs ?? 15000}ms: ${stderr.slice(-500)}`));
      }, options.readyTimeoutMs ?? 15000);
      child.once("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new NatsServerError(
            err.code === "ENOENT"
              ? `nats-server was not found on PATH; install it (apt-get install nats-server) or set Orchestrator.NATS.URL to an external NATS`
              : `could not start nats-server: ${err.message}`,
          ),
        );
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        const inUse = /address already in use/i.test(stderr);
        reject(new NatsServerError(inUse ? `Orchestrator.Port ${port} is already in use` : `nats-server exited (${code}): ${stderr.slice(-500)}`));
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("Server is ready")) {
          clearTimeout(timer);
          child.removeAllListeners("exit");
          child.stderr?.removeAllListeners("data");
          child.stderr?.resume();
          resolve();
        }
      });
    });
    child.once("exit", (code, signal) => logger.warn({ code, signal }, "embedded nats-server exited"));
    logger.info({ url, pid: child.pid }, "embedded nats-server ready");
    return new EmbeddedNatsServer(child, url);
  }

  /** Makes the server re-read its config file (SIGHUP, what `nats-server --signal reload` sends). */
  reload(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGHUP");
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.removeAllListeners("exit");
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}
