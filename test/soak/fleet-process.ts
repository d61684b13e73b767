import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { FleetProgress } from "../../src/sim/virtual-fleet.ts";
import { childEnv } from "./child-env.ts";

const SHOAL = join(import.meta.dirname, "../../bin/shoal");

export interface SimOptions {
  readonly nodes: number;
  readonly prefix: string;
  readonly natsUrl: string;
  readonly tokenFile: string;
  readonly joinRate: number;
  readonly heartbeatMs: number;
  /** How long the nodes' batch and ops executions run (`--run-work --run-time`). */
  readonly runMs: number;
}

export interface AgentOptions {
  readonly nodeId: string;
  readonly dataDir: string;
  readonly natsUrl: string;
  readonly token: string;
  /** `key=value` */
  readonly label: string;
}

/**
 * A `shoal sim` or `shoal compute` process of the soak's fleet, started as a user starts it, with
 * JSON logs: the sim's last progress line is kept, and the tail of what each printed for a failure's
 * message. An exit the soak did not ask for is noted: its nodes stopped running.
 */
export class FleetProcess {
  progress: (FleetProgress & { heartbeatsPerSecond?: number }) | undefined;
  exitedOnItsOwn: string | undefined;
  private tail = "";
  private stopping = false;
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    args: readonly string[],
    env: Readonly<Record<string, string>> = {},
  ) {
    this.child = spawn(SHOAL, [...args, "-c", "Logging.Mode=json"], {
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let partial = "";
    const read = (d: Buffer) => {
      this.tail = (this.tail + d.toString()).slice(-4000);
      partial += d.toString();
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line.includes('"sim progress"')) this.progress = JSON.parse(line) as FleetProgress;
    };
    this.child.stdout?.on("data", read);
    this.child.stderr?.on("data", read);
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => {
        if (this.stopping) return resolve();
        const printed = this.tail.slice(-1500);
        this.exitedOnItsOwn = `${name} exited on its own: code ${code}, signal ${signal}; it printed: ${printed}`;
        resolve();
      }),
    );
  }

  /**
   * `shoal sim --run-work`: `nodes` virtual nodes with ids `<prefix>-<index>`, joining with the token
   * in `tokenFile`, running their work in memory.
   */
  static sim(options: SimOptions): FleetProcess {
    return new FleetProcess("shoal sim", [
      "sim",
      "--nodes",
      String(options.nodes),
      "--id-prefix",
      options.prefix,
      "--orchestrator",
      options.natsUrl,
      "--token-file",
      options.tokenFile,
      "--join-rate",
      `${options.joinRate}/s`,
      "--heartbeat-interval",
      `${options.heartbeatMs}ms`,
      "--run-work",
      "--run-time",
      `${options.runMs}ms`,
    ]);
  }

  /** `shoal compute`: a real agent with Docker, labelled so that the soak's jobs match it and no virtual node. */
  static agent(options: AgentOptions): FleetProcess {
    return new FleetProcess(
      `shoal compute ${options.nodeId}`,
      [
        "compute",
        "--node-id",
        options.nodeId,
        "--labels",
        options.label,
        "-c",
        `DataDir=${options.dataDir}`,
        "-c",
        `Compute.Orchestrators=${options.natsUrl}`,
        "-c",
        "Compute.Heartbeat.Interval=2s",
        "-c",
        "Compute.Heartbeat.ResourceUpdateInterval=2s",
        "-c",
        "Compute.AllocatedCapacity.CPU=2",
        "-c",
        "Compute.AllocatedCapacity.Memory=2Gi",
        "-c",
        "Compute.Docker.StopGracePeriod=1s",
      ],
      // In the environment, as the orchestrator's own instructions say: not in `ps`.
      { SHOAL_COMPUTE_AUTH_TOKEN: options.token },
    );
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    if (!this.running) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** For a signal handler: at once, no waiting. */
  killNow(): void {
    this.stopping = true;
    if (this.running) this.child.kill("SIGKILL");
  }
}
