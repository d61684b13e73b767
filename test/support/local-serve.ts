import { readFileSync } from "node:fs";
import { join } from "node:path";
import { localOrchestratorFlags } from "./local-orchestrator-flags.ts";
import { freePort } from "./nats-server.ts";
import { ShoalProcess } from "./shoal-process.ts";

/**
 * A real `shoal serve` (NodeID node-0) on one DataDir, its API and NATS on local ports picked at the first start:
 * started, killed and started again on the same files and ports, as an operator's would be. `settings` are its
 * `-c Key=value` flags beyond those, `env` its SHOAL_… variables.
 */
export class LocalServe {
  apiPort = 0;
  natsPort = 0;
  /** The latest process started; it may have exited since. */
  process: ShoalProcess | undefined;

  constructor(
    readonly dataDir: string,
    private readonly settings: readonly string[] = [],
    /** SHOAL_… variables it is started with (a secret kept out of its command line). */
    private readonly env: Readonly<Record<string, string>> = {},
  ) {}

  /** The API's base URL; read when called, as the port is picked at the first start. */
  readonly url = (): string => `http://127.0.0.1:${this.apiPort}`;
  /** The admin API key serve wrote on its first start. */
  readonly adminKey = (): string => readFileSync(join(this.dataDir, "credentials", "api-admin-key"), "utf8").trim();
  /** The file of the join token compute nodes present. */
  get joinTokenFile(): string {
    return join(this.dataDir, "credentials", "join-token");
  }
  get natsUrl(): string {
    return `nats://127.0.0.1:${this.natsPort}`;
  }

  /** Starts it and waits until it says it is running. */
  async start(): Promise<ShoalProcess> {
    if (this.apiPort === 0) {
      this.apiPort = await freePort();
      this.natsPort = await freePort();
    }
    const flags = localOrchestratorFlags(this);
    const process = ShoalProcess.start(
      ["serve", ...flags, ...["NodeID=node-0", ...this.settings].flatMap((s) => ["-c", s])],
      { ...this.env },
    );
    this.process = process;
    await process.waitForOutput("orchestrator node-0 is running", 60_000);
    return process;
  }

  get running(): boolean {
    return this.process !== undefined && this.process.child.exitCode === null && this.process.child.signalCode === null;
  }

  /** Kills the running process (kill -9 by default); resolves once it exited. */
  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    if (this.process === undefined) throw new Error("LocalServe.kill: never started");
    return this.process.kill(signal);
  }

  /** Stops it if it still runs: for afterAll, whatever the test left. */
  async stop(): Promise<void> {
    if (this.running) await this.kill("SIGTERM");
  }
}
