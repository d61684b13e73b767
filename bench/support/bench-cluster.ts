import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { connect, type KV, type NatsConnection } from "nats";
import { LEASE_BUCKET } from "../../src/orchestrator/modules/cluster-module.ts";
import { startChild, type RunningChild } from "./child-process.ts";
import { startBenchNats } from "./bench-nats.ts";
import { serveOrchestrator, type ServedOrchestrator } from "./shoal-serve.ts";

const STAND_IN = join(import.meta.dirname, "kurrent-stand-in-child.ts");

export interface BenchClusterOptions {
  readonly partitions: number;
  /** More `-c` settings for every orchestrator (thresholds, the lease TTL). */
  readonly settings?: Readonly<Record<string, string | number>>;
}

/** One `shoal serve` of the cluster, `orch-<n>`. */
export interface BenchMember {
  readonly nodeId: string;
  readonly served: ServedOrchestrator;
}

/**
 * Several orchestrators on one machine for the benchmarks: one nats-server with JetStream, the KurrentDB stand-in in
 * its own process, and `shoal serve` processes in cluster mode (`orch-1`, `orch-2`, …, each with its own DataDir and
 * generated admin key). Which orchestrator holds each lease is followed with a watch on SHOAL_LEASES.
 */
export class BenchCluster {
  readonly members: BenchMember[] = [];
  /** Each lease's holder by key (`partitions.<p>`, `duties.<name>`): its NodeID, or undefined when free. */
  readonly holders = new Map<string, string | undefined>();
  private readonly changed = new Set<() => void>();
  private started = 0;

  private constructor(
    readonly options: BenchClusterOptions,
    readonly natsUrl: string,
    readonly storeUrl: string,
    readonly token: string,
    /** The bench's own connection. */
    readonly nc: NatsConnection,
    /** The KurrentDB stand-in's process and nats-server's: their CPU is the store's and NATS's share of a run. */
    readonly storePid: number | undefined,
    readonly natsPid: number | undefined,
    private readonly cleanups: (() => Promise<unknown> | unknown)[],
  ) {}

  static async start(options: BenchClusterOptions): Promise<BenchCluster> {
    const cleanups: (() => Promise<unknown> | unknown)[] = [];
    try {
      const server = await startBenchNats(cleanups);
      const standIn: RunningChild = await startChild(process.execPath, ["--import", "tsx", STAND_IN], "listening ");
      cleanups.push(() => standIn.stop());
      const storeUrl = /listening (\S+)/.exec(standIn.output())?.[1] ?? "";
      const nc = await connect({ servers: server.url, name: "bench-cluster" });
      cleanups.push(() => nc.close());
      const token = randomBytes(16).toString("hex");
      return new BenchCluster(options, server.url, storeUrl, token, nc, standIn.child.pid, server.pid, cleanups);
    } catch (e) {
      for (const cleanup of cleanups.reverse()) await cleanup();
      throw e;
    }
  }

  /** Starts the next orchestrator and waits until it runs (it takes its leases in the following ticks). */
  async add(): Promise<BenchMember> {
    const nodeId = `orch-${++this.started}`;
    const served = await serveOrchestrator({
      NodeID: nodeId,
      "EventStore.URL": this.storeUrl,
      "Orchestrator.NATS.URL": this.natsUrl,
      "Orchestrator.Cluster.Enabled": "true",
      "Orchestrator.Cluster.Partitions": this.options.partitions,
      "Orchestrator.Cluster.Replicas": 1,
      "Orchestrator.Auth.Token": this.token,
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      ...this.options.settings,
    });
    const member = { nodeId, served };
    this.members.push(member);
    this.cleanups.push(() => served.stop());
    return member;
  }

  /** Takes it out of the members; the caller ends its process (kill -9, or SIGTERM for a graceful stop). */
  remove(member: BenchMember): void {
    this.members.splice(this.members.indexOf(member), 1);
  }

  /** Follows SHOAL_LEASES from now on (the bucket exists once an orchestrator has started). */
  async watchLeases(): Promise<void> {
    const kv: KV = await this.nc.jetstream().views.kv(LEASE_BUCKET, { bindOnly: true });
    const watch = await kv.watch({ key: ">" });
    this.cleanups.push(() => watch.stop());
    const decoder = new TextDecoder();
    void (async () => {
      for await (const entry of watch) {
        const holder = entry.operation === "PUT" ? decoder.decode(entry.value).split("/")[0] : undefined;
        this.holders.set(entry.key, holder);
        for (const listener of this.changed) listener();
      }
    })();
  }

  /** Whether every partition's lease is held by a running member, and `also` holds. */
  partitionsServed(also: (counts: Map<string, number>) => boolean = () => true): boolean {
    const live = new Set(this.members.map((m) => m.nodeId));
    const counts = new Map<string, number>();
    for (let p = 0; p < this.options.partitions; p++) {
      const holder = this.holders.get(`partitions.${p}`);
      if (holder === undefined || !live.has(holder)) return false;
      counts.set(holder, (counts.get(holder) ?? 0) + 1);
    }
    return also(counts);
  }

  /** Every partition held by a running member, each holding its fair share: the cluster has settled. */
  balanced(): boolean {
    const share = Math.ceil(this.options.partitions / this.members.length);
    return this.partitionsServed(
      (counts) => counts.size === this.members.length && [...counts.values()].every((n) => n <= share),
    );
  }

  /** Every duty's lease is held by a running member. */
  dutiesServed(duties: readonly string[]): boolean {
    const live = new Set(this.members.map((m) => m.nodeId));
    return duties.every((d) => live.has(this.holders.get(`duties.${d}`) ?? ""));
  }

  /** Resolves with the moment (performance.now()) a lease change first made `condition` true; rejects after `ms`. */
  when(condition: () => boolean, ms: number, what: string): Promise<number> {
    if (condition()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.changed.delete(listener);
        reject(
          new Error(`${what}: not within ${ms / 1000} s; leases ${JSON.stringify(Object.fromEntries(this.holders))}`),
        );
      }, ms);
      const listener = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.changed.delete(listener);
        resolve(performance.now());
      };
      this.changed.add(listener);
    });
  }

  async close(): Promise<void> {
    for (const cleanup of this.cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}
