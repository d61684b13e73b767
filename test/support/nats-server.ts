import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** A real nats-server with JetStream on a free port, per suite. */
export class TestNatsServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<TestNatsServer> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "shoal-nats-"));
    const child = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir], { stdio: ["ignore", "ignore", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`nats-server not ready: ${err}`)), 10_000);
      child.once("error", reject);
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        if (err.includes("Server is ready")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return new TestNatsServer(child, `nats://127.0.0.1:${port}`, port, dir);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once("exit", r));
      this.child.kill("SIGTERM");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
