import { setTimeout as sleep } from "node:timers/promises";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { Simulation } from "../../src/sim/simulation.ts";
import { orchestratorConfig, silentLogger, tempDir } from "./fixtures.ts";
import { JobApiClient } from "./job-api-client.ts";
import { ManualClock } from "./manual-clock.ts";
import { freePort } from "./nats-server.ts";
import { waitFor } from "./shoal-process.ts";

const KEY = "virtual-fleet-key-0123456789abcdefghij";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];

/**
 * A daemon job for every virtual node (they carry `sim=true`). Virtual nodes run nothing, so each
 * execution stays under way until the answer bound, which the cluster sets past any test's clock.
 */
export const VIRTUAL_DAEMON_JOB = {
  Type: "daemon",
  Constraints: [{ Key: "sim", Operator: "=", Values: ["true"] }],
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "busybox:1", Entrypoint: ["sleep", "600"] } },
      Resources: { CPU: "10m", Memory: "8Mb" },
    },
  ],
};

export interface PassOptions {
  /** Clock time per step; real time between steps lets the live nodes heartbeat. */
  readonly stepMs?: number;
  /** Asked after each step: stop early once it holds. */
  readonly until?: () => Promise<boolean>;
}

/**
 * An orchestrator on a manual clock (its own nats-server, SQLite in a temp dir, the API behind an
 * operator's key) and `shoal sim`'s virtual nodes joined to it, for the node reactions' tests: the
 * orchestrator can be stopped and started again on the same store and clock while the fleets keep
 * running.
 */
export class VirtualFleetCluster {
  readonly clock = new ManualClock(Date.now());
  readonly api = new JobApiClient(
    () => this.running().apiUrl,
    () => KEY,
  );
  private readonly sims: Simulation[] = [];
  private orchestrator: RunningOrchestrator | undefined;

  private constructor(
    readonly dataDir: string,
    private readonly config: ShoalConfig,
  ) {}

  /** `extra`: the node manager's and scheduler's keys this test is about. */
  static async start(name: string, extra: Partial<ShoalConfig>): Promise<VirtualFleetCluster> {
    const dataDir = tempDir(`shoal-${name}-`);
    const config = orchestratorConfig("", {
      DataDir: dataDir,
      "API.Auth.Users": USERS,
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": await freePort(),
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      "Orchestrator.NodeManager.UnknownTimeout": 3_600_000,
      // Virtual nodes never answer their work: it stays under way until the answer bound, past the test's clock.
      "Orchestrator.Scheduler.ExecutionAnswerTimeout": 3_600_000,
      ...extra,
    });
    const cluster = new VirtualFleetCluster(dataDir, config);
    await cluster.startOrchestrator();
    return cluster;
  }

  running(): RunningOrchestrator {
    if (this.orchestrator === undefined) throw new Error("the orchestrator is stopped");
    return this.orchestrator;
  }

  async startOrchestrator(): Promise<void> {
    this.orchestrator = await startOrchestrator(this.config, silentLogger, { clock: this.clock });
  }

  async stopOrchestrator(): Promise<void> {
    const running = this.orchestrator;
    this.orchestrator = undefined;
    await running?.stop();
  }

  /** `nodes` virtual nodes named `<idPrefix>-<n>`, joining the running orchestrator. */
  fleet(nodes: number, idPrefix: string): Simulation {
    const orchestrator = this.running();
    const sim = Simulation.start({
      nodes,
      idPrefix,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      heartbeatMs: 200,
      jitterMs: 20,
      infoUpdateMs: 5000,
      resourceUpdateMs: 5000,
      joinRatePerSecond: 100,
      maxJoining: 1,
      initialBackoffMs: 200,
      maxBackoffMs: 1000,
      logger: silentLogger,
      dataDir: tempDir(`shoal-sim-${idPrefix}-`),
    });
    this.sims.push(sim);
    return sim;
  }

  /** Until every node of every fleet heartbeats. */
  async allHeartbeating(timeoutMs: number): Promise<void> {
    await waitFor(
      () => this.sims.every((s) => s.fleet.progress().heartbeating === s.fleet.progress().nodes),
      timeoutMs,
      () => `all heartbeating: ${JSON.stringify(this.sims.map((s) => s.fleet.progress()))}`,
    );
  }

  /** Moves the clock on by `ms` in steps, with 250 ms of real time between them. */
  async pass(ms: number, { stepMs = 1_000, until }: PassOptions = {}): Promise<void> {
    for (let t = 0; t < ms; t += stepMs) {
      await this.clock.advance(stepMs);
      await sleep(250);
      if (until !== undefined && (await until())) return;
    }
  }

  async stop(): Promise<void> {
    for (const sim of this.sims) await sim.stop();
    await this.stopOrchestrator();
  }
}
