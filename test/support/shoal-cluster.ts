import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type KV, type NatsConnection } from "nats";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { LEASE_BUCKET } from "../../src/orchestrator/modules/cluster-module.ts";
import { tempDir } from "./fixtures.ts";
import { JobApiClient } from "./job-api-client.ts";
import { StandInProcess } from "./kurrent-stand-in/stand-in-process.ts";
import { TestNatsCluster } from "./nats-cluster.ts";
import { freePort } from "./nats-server.ts";
import { ShoalProcess, waitFor } from "./shoal-process.ts";

/** The API key every orchestrator of the cluster takes (API users are the same everywhere: docs/operations.md). */
export const CLUSTER_API_KEY = "cluster-scenarios-key-0123456789abcdef";
/** The join token every orchestrator of the cluster takes. */
export const CLUSTER_JOIN_TOKEN = "cluster-scenarios-join-token";
const USERS = [{ Alias: "ops", APIKey: CLUSTER_API_KEY, Capabilities: [{ Actions: ["*"] }] }];

/** A lease in SHOAL_LEASES: its holder's NodeID, its whole value (`<NodeID>/<start>`) and its revision. */
export interface LeaseEntry {
  readonly nodeId: string;
  readonly holder: string;
  readonly revision: number;
}

/** One pino JSON record an orchestrator logged. */
export type LogRecord = Record<string, unknown> & { readonly msg?: string };

/** One `shoal serve` of the cluster: its NodeID, DataDir and API port stay the same across restarts. */
export class ClusterOrchestrator {
  /** Every process started for it, the latest last; their stderr is its log. */
  readonly processes: ShoalProcess[] = [];

  constructor(
    readonly nodeId: string,
    readonly dataDir: string,
    readonly apiPort: number,
    private readonly settings: readonly string[],
  ) {}

  /**
   * One of the cluster `common` describes (clusterServeSettings) as `nodeId`, with a DataDir and API port of its own;
   * not started.
   */
  static async create(nodeId: string, common: readonly string[]): Promise<ClusterOrchestrator> {
    const dataDir = tempDir(`shoal-${nodeId}-`);
    const apiPort = await freePort();
    const own = [`NodeID=${nodeId}`, `DataDir=${dataDir}`, `API.Port=${apiPort}`];
    return new ClusterOrchestrator(nodeId, dataDir, apiPort, [...common, ...own]);
  }

  readonly url = (): string => `http://127.0.0.1:${this.apiPort}`;
  readonly api = new JobApiClient(this.url, () => CLUSTER_API_KEY);

  get process(): ShoalProcess {
    const latest = this.processes.at(-1);
    if (latest === undefined) throw new Error(`orchestrator ${this.nodeId} was never started`);
    return latest;
  }

  get running(): boolean {
    const child = this.processes.at(-1)?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Starts it (again) and waits until it says it is running. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`orchestrator ${this.nodeId} is running`);
    const process = ShoalProcess.start(["serve", ...this.settings.flatMap((s) => ["-c", s])]);
    this.processes.push(process);
    await process.waitForOutput(`orchestrator ${this.nodeId} is running`, 60_000);
  }

  /** Sends a signal that does not end it (SIGSTOP, SIGCONT). */
  signal(signal: "SIGSTOP" | "SIGCONT"): void {
    this.process.child.kill(signal);
  }

  /** Ends it with `signal` (kill -9 unless said) and resolves once it exited, with its exit code. */
  kill(signal: "SIGKILL" | "SIGTERM" = "SIGKILL"): Promise<number | null> {
    return this.process.kill(signal);
  }

  /** Whatever a test left: a stopped process is continued, then it is killed. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.signal("SIGCONT");
    await this.kill();
  }

  /** Its log records across all its starts, in order; lines that are not JSON (none, in json mode) are skipped. */
  logs(): LogRecord[] {
    const records: LogRecord[] = [];
    for (const p of this.processes)
      for (const line of p.stderr.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          records.push(JSON.parse(line) as LogRecord);
        } catch {
          // A line cut off by a kill -9.
        }
      }
    return records;
  }
}

/**
 * The `-c Key=value` settings every orchestrator of a cluster takes: the store and NATS (a server, or a cluster's
 * servers) they share, the partitions, the join token and API users every one has, plain HTTP APIs and JSON logs;
 * then `extra`.
 */
export function clusterServeSettings(
  storeUrl: string,
  natsUrls: readonly string[],
  partitions: number,
  extra: readonly string[] = [],
): string[] {
  return [
    `EventStore.URL=${storeUrl}`,
    `Orchestrator.NATS.URL=${natsUrls.join(",")}`,
    // What the test cluster's servers can give SHOAL_EVENTS, as on a small real cluster.
    "Orchestrator.NATS.JetStreamMaxStore=64MiB",
    "Orchestrator.Cluster.Enabled=true",
    `Orchestrator.Cluster.Partitions=${partitions}`,
    `Orchestrator.Auth.Token=${CLUSTER_JOIN_TOKEN}`,
    `API.Auth.Users=${JSON.stringify(USERS)}`,
    "API.Host=127.0.0.1",
    "Logging.Mode=json",
    ...extra,
  ];
}

export interface ShoalClusterOptions {
  readonly orchestrators: number;
  readonly partitions: number;
  /** More `-c Key=value` settings for every orchestrator (thresholds, lease TTL). */
  readonly settings?: readonly string[];
}

/**
 * Several orchestrators as production runs them, on one machine: a NATS cluster of three servers with JetStream, the
 * KurrentDB stand-in in a process of its own, and `shoal serve` processes in cluster mode (plain HTTP APIs, JSON logs),
 * each with its own NodeID (`orch-<n>`), DataDir and API port. The test reads what they did from the store, the lease
 * bucket and their logs, and kills, stops, continues and restarts them with real signals.
 */
export class ShoalCluster {
  private constructor(
    readonly nats: TestNatsCluster,
    readonly standIn: StandInProcess,
    readonly orchestrators: readonly ClusterOrchestrator[],
    readonly partitions: number,
    /** The test's own reader of the store. */
    readonly store: EsdbEventStore,
    /** The test's own client of the NATS cluster. */
    readonly nc: NatsConnection,
  ) {}

  static async start(options: ShoalClusterOptions): Promise<ShoalCluster> {
    const nats = await TestNatsCluster.start();
    const standIn = await StandInProcess.start().catch(async (e: unknown) => {
      await nats.stop();
      throw e;
    });
    const common = clusterServeSettings(standIn.url, nats.urls, options.partitions, options.settings);
    const orchestrators: ClusterOrchestrator[] = [];
    for (let i = 1; i <= options.orchestrators; i++)
      orchestrators.push(await ClusterOrchestrator.create(`orch-${i}`, common));
    let store: EsdbEventStore | undefined;
    let nc: NatsConnection | undefined;
    try {
      await Promise.all(orchestrators.map((o) => o.start()));
      store = await EsdbEventStore.open(standIn.url);
      nc = await connect({ servers: nats.urls });
      return new ShoalCluster(nats, standIn, orchestrators, options.partitions, store, nc);
    } catch (e) {
      await Promise.all(orchestrators.map((o) => o.stop()));
      await store?.close();
      await nc?.close();
      await standIn.stop();
      await nats.stop();
      throw e;
    }
  }

  orchestrator(nodeId: string): ClusterOrchestrator {
    const found = this.orchestrators.find((o) => o.nodeId === nodeId);
    if (!found) throw new Error(`no orchestrator ${nodeId} in this cluster`);
    return found;
  }

  /** An orchestrator that runs now, other than those named: where a client goes while one is down. */
  anyRunning(...besides: string[]): ClusterOrchestrator {
    const found = this.orchestrators.find((o) => o.running && !besides.includes(o.nodeId));
    if (!found) throw new Error("no orchestrator runs");
    return found;
  }

  private kvOpened: KV | undefined;

  /** The lease bucket the orchestrators made. */
  async leaseBucket(): Promise<KV> {
    this.kvOpened ??= await this.nc.jetstream().views.kv(LEASE_BUCKET, { bindOnly: true });
    return this.kvOpened;
  }

  /** The lease held under `key` (`partitions.<p>`, `duties.<name>`), or undefined when it is free. */
  async lease(key: string): Promise<LeaseEntry | undefined> {
    const entry = await (await this.leaseBucket()).get(key);
    if (entry?.operation !== "PUT") return undefined;
    const holder = new TextDecoder().decode(entry.value);
    return { nodeId: holder.split("/")[0] as string, holder, revision: entry.revision };
  }

  /** Each partition's lease, by partition. */
  async partitionLeases(): Promise<(LeaseEntry | undefined)[]> {
    const leases: (LeaseEntry | undefined)[] = [];
    for (let p = 0; p < this.partitions; p++) leases.push(await this.lease(`partitions.${p}`));
    return leases;
  }

  /** The NodeID of each partition's owner now (undefined: nobody holds it). */
  async owners(): Promise<(string | undefined)[]> {
    return (await this.partitionLeases()).map((l) => l?.nodeId);
  }

  /**
   * Until every partition is held and the orchestrators named share them out evenly (each holds at least its whole
   * share), so that no hand-off is still to come while they all run.
   */
  async untilServedBy(nodeIds: readonly string[], timeoutMs: number): Promise<void> {
    const share = Math.floor(this.partitions / nodeIds.length);
    let last: (string | undefined)[] = [];
    await waitFor(
      async () => {
        last = await this.owners().catch(() => []);
        return (
          last.length === this.partitions &&
          last.every((o) => o !== undefined) &&
          nodeIds.every((id) => last.filter((o) => o === id).length >= share)
        );
      },
      timeoutMs,
      () => `every partition held, ${share} or more by each of ${nodeIds.join(", ")}; owners: ${JSON.stringify(last)}`,
    );
  }

  /** Every stored event, in store order. */
  events(): Promise<RecordedEvent[]> {
    return this.store.readAll();
  }

  /** The nats-server that leads the stream now (by its server name). */
  async streamLeader(stream: string): Promise<string | undefined> {
    const info = await (await this.nc.jetstreamManager()).streams.info(stream);
    return info.cluster?.leader;
  }

  /**
   * Writes each orchestrator's log (all its starts) to `<dir>/<NodeID>.log` and the stored events to
   * `<dir>/events.jsonl`, to read after a failed run.
   */
  async saveLogs(dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    for (const o of this.orchestrators)
      writeFileSync(join(dir, `${o.nodeId}.log`), o.processes.map((p) => p.stderr).join("\n"));
    const events = await this.events();
    const line = (e: RecordedEvent) =>
      JSON.stringify({ position: e.position, stream: e.stream, type: e.type, data: e.data, metadata: e.metadata });
    writeFileSync(join(dir, "events.jsonl"), events.map(line).join("\n"));
  }

  async stop(): Promise<void> {
    await Promise.all(this.orchestrators.map((o) => o.stop()));
    await this.store.close().catch(() => undefined);
    await this.nc.close().catch(() => undefined);
    await this.standIn.stop();
    await this.nats.stop();
  }
}
