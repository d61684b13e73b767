import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nkeys } from "nats";
import type { Logger } from "pino";
import { ComputeAgent, type AgentOutcome } from "../compute/compute-agent.ts";
import type { JoinKey } from "../transport/join-proof.ts";
import { userNkeyFromSeed } from "../transport/nkey-signature.ts";
import { SimExecutor } from "./sim-executor.ts";
import type { NatsClientTls } from "../transport/nats-tls.ts";
import { virtualNodeCapacity, virtualNodeInfo } from "./virtual-node-info.ts";

export interface VirtualFleetOptions {
  readonly nodes: number;
  /** Node ids are `<idPrefix>-<index>`: fleets with different prefixes never share a node. */
  readonly idPrefix: string;
  readonly orchestrators: readonly string[];
  /** TLS to the orchestrators' NATS, as a compute node's (Compute.TLS.*). */
  readonly tls?: NatsClientTls;
  readonly token: string;
  readonly heartbeatMs: number;
  readonly jitterMs: number;
  readonly infoUpdateMs: number;
  readonly resourceUpdateMs: number;
  /** Node starts (joins, and restarts after a kill) per second. */
  readonly joinRatePerSecond: number;
  /** Nodes joining at once at most: each holds a second connection (the join login) meanwhile. */
  readonly maxJoining?: number;
  readonly logger: Logger;
  /** Where the nodes keep their registration sentinels; default a temporary directory, removed on stop. */
  readonly dataDir?: string;
  /** The agents' join retry backoff (defaults: the agent's). */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /**
   * The i-th node's key; default a fresh one. With keys already bound in the store, a registration
   * sentinel in dataDir and each node's user JWT (`jwt`) a node starts without joining: a
   * pre-provisioned fleet.
   */
  readonly key?: (index: number) => JoinKey;
  /**
   * Nodes take work: each runs its executions in a SimExecutor (in memory, nothing runs) for
   * `runMs` unless the task says otherwise. Without it a node answers no work.
   */
  readonly runWork?: { readonly runMs: number };
  /**
   * The i-th node's user JWT for its key, as its agent would have kept it from a join; asked once, when the fleet
   * starts. The orchestrator's own nats-server (operator mode) refuses a key alone, so a node with neither a JWT
   * nor the join token cannot log in.
   */
  readonly jwt?: (index: number) => string | undefined;
}

/** Counts at one moment; the refused/failed/heartbeat totals are cumulative since start. */
export interface FleetProgress {
  readonly nodes: number;
  /** Started and not killed. */
  readonly running: number;
  /** Joining right now (their first join, or a restart after a kill). */
  readonly joining: number;
  /** Joined (or confirmed by their sentinel after a restart) and not killed. */
  readonly registered: number;
  /** Running nodes whose last heartbeat was accepted. */
  readonly heartbeating: number;
  readonly killed: number;
  readonly joinsAccepted: number;
  readonly heartbeatsAccepted: number;
  readonly refused: number;
  readonly refusedByCode: Readonly<Record<string, number>>;
  /** Exchanges that got no answer (NATS or the orchestrator unreachable, a timeout). */
  readonly failed: number;
  /**
   * Failed joins by what failed (nats.js's code: TIMEOUT, AUTHENTICATION_TIMEOUT, …): each agent retries them, and
   * logs each retry, but a fleet's agents log only errors, so this is where a storm of them shows.
   */
  readonly failedJoinsByCode: Readonly<Record<string, number>>;
  /** Agents that gave up: only an explicit refusal does (a wrong token, a key conflict); failures are retried. */
  readonly gaveUp: number;
}

const MAX_GIVE_UP_LOGS = 10;

const count = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
const PUMP_MS = 10;

/**
 * N compute nodes in one process, each a real ComputeAgent with its own nkey (kept in memory)
 * and its own NATS connection, speaking the real protocol: join with the token, reconnect as
 * itself, then heartbeats, info and resources. Nodes start at a bounded rate; a share can be
 * killed (agent stopped, connection closed, as a crashed machine) and revived (a new agent
 * with the same key and sentinel, as a restarted one).
 */
export class VirtualFleet {
  private readonly agents: (ComputeAgent | undefined)[];
  private readonly keys: (JoinKey | undefined)[];
  /**
   * Each node's user JWT, as an agent keeps it in `<DataDir>/credentials/<id>.jwt` to log in as
   * itself after a restart (a revived node does). In memory, not a file per node: N atomic,
   * fsynced writes (and N files) only cost the machine the sim shares with what it loads. The
   * running agent holds the same string, so this costs a slot per node, never more than one JWT.
   */
  private readonly jwts: (string | undefined)[];
  private readonly registered: Uint8Array;
  private readonly lastHeartbeatAccepted: Uint8Array;
  /** Date.now() when each node's last accepted heartbeat was answered (0: none yet). */
  private readonly heartbeatAcceptedAt: Float64Array;
  private readonly killed: Uint8Array;
  private readonly queue: number[] = [];
  private queueHead = 0;
  private joining = 0;
  private tokens = 0;
  private lastPump = 0;
  private pump: NodeJS.Timeout | undefined;
  private readonly dataDir: string;
  private readonly ownsDataDir: boolean;
  private readonly agentLogger: Logger;
  private stopped = false;
  private joinsAccepted = 0;
  private heartbeatsAccepted = 0;
  private refused = 0;
  private readonly refusedByCode = new Map<string, number>();
  private failed = 0;
  private readonly failedJoinsByCode = new Map<string, number>();
  private gaveUp = 0;
  private readonly idWidth: number;

  constructor(private readonly options: VirtualFleetOptions) {
    const n = options.nodes;
    this.agents = new Array<ComputeAgent | undefined>(n);
    this.keys = new Array<JoinKey | undefined>(n);
    this.jwts = new Array<string | undefined>(n);
    this.registered = new Uint8Array(n);
    this.lastHeartbeatAccepted = new Uint8Array(n);
    this.heartbeatAcceptedAt = new Float64Array(n);
    this.killed = new Uint8Array(n);
    this.idWidth = String(Math.max(0, n - 1)).length;
    this.ownsDataDir = options.dataDir === undefined;
    this.dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "shoal-sim-"));
    // Per-node warnings would flood at fleet scale: the counters tell the story, errors still show.
    this.agentLogger = options.logger.child({ component: "virtual-node" }, { level: "error" });
  }

  nodeId(index: number): string {
    return `${this.options.idPrefix}-${String(index).padStart(this.idWidth, "0")}`;
  }

  /** Queues every node to start at the join rate; returns at once. */
  start(): void {
    for (let i = 0; i < this.options.nodes; i++) {
      this.jwts[i] ??= this.options.jwt?.(i);
      this.queue.push(i);
    }
    this.lastPump = performance.now();
    this.pump = setInterval(() => this.startSome(), PUMP_MS);
    this.startSome();
  }

  private startSome(): void {
    const now = performance.now();
    const rate = this.options.joinRatePerSecond;
    // A burst of at most 50 ms worth: a stalled loop must not release a flood.
    this.tokens = Math.min(this.tokens + ((now - this.lastPump) / 1000) * rate, Math.max(1, rate / 20));
    this.lastPump = now;
    const maxJoining = this.options.maxJoining ?? 256;
    while (this.tokens >= 1 && this.joining < maxJoining && this.queueHead < this.queue.length && !this.stopped) {
      this.tokens -= 1;
      this.launch(this.queue[this.queueHead++] as number);
    }
    if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
  }

  private key(index: number): JoinKey {
    return (this.keys[index] ??= this.options.key?.(index) ?? userNkeyFromSeed(nkeys.createUser().getSeed()));
  }

  private launch(index: number): void {
    const nodeId = this.nodeId(index);
    const agent = new ComputeAgent({
      nodeId,
      orchestrators: this.options.orchestrators,
      ...(this.options.tls === undefined ? {} : { tls: this.options.tls }),
      token: this.options.token,
      labels: {},
      dataDir: this.dataDir,
      heartbeatMs: this.options.heartbeatMs,
      infoUpdateMs: this.options.infoUpdateMs,
      resourceUpdateMs: this.options.resourceUpdateMs,
      jitterMs: this.options.jitterMs,
      logger: this.agentLogger,
      key: this.key(index),
      jwtStore: { load: () => this.jwts[index], save: (jwt) => void (this.jwts[index] = jwt) },
      nodeInfo: () => virtualNodeInfo(nodeId, index),
      observe: (outcome) => this.observe(index, outcome),
      ...(this.options.runWork === undefined
        ? {}
        : {
            executor: new SimExecutor(nodeId, virtualNodeCapacity(index), this.options.runWork.runMs),
            executionsInMemory: true,
          }),
      ...(this.options.initialBackoffMs === undefined ? {} : { initialBackoffMs: this.options.initialBackoffMs }),
      ...(this.options.maxBackoffMs === undefined ? {} : { maxBackoffMs: this.options.maxBackoffMs }),
    });
    this.agents[index] = agent;
    this.joining++;
    agent.start().then(
      () => {
        this.joining--;
        if (this.agents[index] === agent && agent.isRegistered) this.registered[index] = 1;
      },
      (err: unknown) => {
        this.joining--;
        this.gaveUp++;
        if (this.agents[index] === agent) this.agents[index] = undefined;
        if (this.gaveUp <= MAX_GIVE_UP_LOGS)
          this.options.logger.error({ nodeId, reason: (err as Error).message }, "virtual node gave up joining");
        if (this.gaveUp === MAX_GIVE_UP_LOGS) this.options.logger.error("further nodes that give up are only counted");
        void agent.stop();
      },
    );
  }

  private observe(index: number, { what, outcome, code }: AgentOutcome): void {
    // Heartbeats are published: one that was sent counts until a refusal says otherwise.
    if (outcome === "accepted" || outcome === "sent") {
      if (what === "heartbeat") {
        this.heartbeatsAccepted++;
        this.lastHeartbeatAccepted[index] = 1;
        this.heartbeatAcceptedAt[index] = Date.now();
      } else if (what === "join") this.joinsAccepted++;
      return;
    }
    if (what === "heartbeat") this.lastHeartbeatAccepted[index] = 0;
    if (outcome === "failed") {
      this.failed++;
      if (what === "join") count(this.failedJoinsByCode, code ?? "unknown");
      return;
    }
    this.refused++;
    count(this.refusedByCode, code ?? "unknown");
  }

  /**
   * Kills round(fraction × nodes) registered, running nodes chosen at random: their agents stop
   * and their connections close, as crashed machines. Returns their ids.
   */
  kill(fraction: number): string[] {
    const candidates: number[] = [];
    for (let i = 0; i < this.options.nodes; i++)
      if (this.agents[i] !== undefined && this.registered[i] === 1 && this.killed[i] === 0) candidates.push(i);
    const count = Math.min(candidates.length, Math.round(fraction * this.options.nodes));
    const chosen: number[] = [];
    for (let k = 0; k < count; k++) {
      const j = k + Math.floor(Math.random() * (candidates.length - k));
      [candidates[k], candidates[j]] = [candidates[j] as number, candidates[k] as number];
      chosen.push(candidates[k] as number);
    }
    for (const i of chosen) {
      const agent = this.agents[i];
      this.agents[i] = undefined;
      this.killed[i] = 1;
      this.registered[i] = 0;
      this.lastHeartbeatAccepted[i] = 0;
      void agent?.stop();
    }
    return chosen.map((i) => this.nodeId(i));
  }

  /** Restarts every killed node (same key, same sentinel) at the join rate. Returns their ids. */
  revive(): string[] {
    const ids: string[] = [];
    for (let i = 0; i < this.options.nodes; i++) {
      if (this.killed[i] === 0) continue;
      this.killed[i] = 0;
      this.queue.push(i);
      ids.push(this.nodeId(i));
    }
    return ids;
  }

  /** When the node's last accepted heartbeat was answered (Date.now()), or undefined if none was. */
  lastHeartbeatAcceptedAt(index: number): number | undefined {
    const at = this.heartbeatAcceptedAt[index];
    return at === undefined || at === 0 ? undefined : at;
  }

  progress(): FleetProgress {
    let running = 0;
    let registered = 0;
    let heartbeating = 0;
    let killed = 0;
    for (let i = 0; i < this.options.nodes; i++) {
      if (this.killed[i] === 1) killed++;
      if (this.agents[i] === undefined) continue;
      running++;
      if (this.registered[i] === 1) registered++;
      if (this.lastHeartbeatAccepted[i] === 1) heartbeating++;
    }
    return {
      nodes: this.options.nodes,
      running,
      joining: this.joining,
      registered,
      heartbeating,
      killed,
      joinsAccepted: this.joinsAccepted,
      heartbeatsAccepted: this.heartbeatsAccepted,
      refused: this.refused,
      refusedByCode: Object.fromEntries(this.refusedByCode),
      failed: this.failed,
      failedJoinsByCode: Object.fromEntries(this.failedJoinsByCode),
      gaveUp: this.gaveUp,
    };
  }

  /** Stops every node (each closes its connection) and removes the fleet's own temporary directory. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pump);
    const agents = this.agents.filter((a): a is ComputeAgent => a !== undefined);
    this.agents.fill(undefined);
    await Promise.all(agents.map((a) => a.stop()));
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}
