import type { Logger } from "pino";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { JobType } from "../events/catalog/job-spec.ts";
import { takeEventLoopLag } from "./event-loop-lag.ts";
import type { CollectorKind, EventStreamFigures, MetricCollectors } from "./metric-collectors.ts";
import { exposition, registerBuildInfo } from "./process-metrics.ts";

/** Durations of REST requests, in seconds: 1 ms to 10 s. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Events per durable commit: one (one fsync per append) up to large group commits. */
const BATCH_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
/** Submission to placement, in seconds: a placement at once (milliseconds) up to an hour in the queue. */
const PLACEMENT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** How late a deadline fires, in seconds: on time (under a millisecond) up to a stalled event loop. */
const LATENESS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** The label for requests that matched no route: never the raw URL, whose values are unbounded. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Where a cluster's figures come from, said in the help of the gauges read off read models: every orchestrator
 * projects the whole cluster, so adding them up across orchestrators counts each thing once per orchestrator.
 */
const PROJECTED = "as this orchestrator's read model has them (every orchestrator of a cluster projects all of them)";

/**
 * Every metric Shoal exposes at /metrics (all named `shoal_…`, plus Node's process metrics).
 * Hot paths call the push methods (`heartbeatReceived`, `observeCommit`, …), which cost one
 * counter increment; gauges are asked of their owners on each scrape through
 * `registerCollector`, so components that do not exist yet plug in without changing this class.
 */
export class ShoalMetrics {
  readonly registry = new Registry();
  private readonly collectors: { [K in CollectorKind]: Set<MetricCollectors[K]> } = {
    nodes: new Set(),
    processors: new Set(),
    actors: new Set(),
    deadlines: new Set(),
    eventStream: new Set(),
    encodedEvents: new Set(),
    cluster: new Set(),
    jobs: new Set(),
    executions: new Set(),
    nodeRestrictions: new Set(),
  };
  private readonly heartbeats: Counter;
  private readonly eventsAppended: Counter;
  private readonly commitBatch: Histogram;
  private readonly natsReconnects: Counter;
  private readonly eventStreamCutOffs: Counter;
  private readonly requests: Histogram<"method" | "route" | "status_class">;
  private readonly placements: Counter<"type">;
  private readonly placementLatency: Histogram<"type">;
  private readonly deadlineLateness: Histogram;
  private appendedPosition = 0;
  /** Heartbeats counted since the last scrape, which adds them to `heartbeats`. */
  private heartbeatsSinceScrape = 0;
  /** Likewise the events appended since the last scrape. */
  private appendedSinceScrape = 0;

  constructor(private readonly logger: Logger) {
    const registers = [this.registry];
    this.heartbeats = new Counter({
      name: "shoal_heartbeats_received_total",
      help: "Heartbeats received from compute nodes",
      registers,
      // Added up at each scrape: an increment per heartbeat allocated on the hottest path.
      collect: () => {
        this.heartbeats.inc(this.heartbeatsSinceScrape);
        this.heartbeatsSinceScrape = 0;
      },
    });
    this.eventsAppended = new Counter({
      name: "shoal_events_appended_total",
      help: "Events durably appended to the event store by this orchestrator",
      registers,
      // As the heartbeats: prom-client's inc() allocates, and appends come tens of thousands a second.
      collect: () => {
        this.eventsAppended.inc(this.appendedSinceScrape);
        this.appendedSinceScrape = 0;
      },
    });
    this.commitBatch = new Histogram({
      name: "shoal_store_commit_batch_size",
      help: "Events per durable commit of the event store (appends that share one commit count as one batch)",
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.natsReconnects = new Counter({
      name: "shoal_nats_reconnects_total",
      help: "Times this orchestrator's NATS connection was re-established",
      registers,
    });
    this.eventStreamCutOffs = new Counter({
      name: "shoal_event_stream_cutoffs_total",
      help: "Event stream clients sent their resume message and closed for not reading what they were sent",
      registers,
    });
    this.requests = new Histogram({
      name: "shoal_http_request_duration_seconds",
      help: "REST request durations by route pattern, method and status class",
      labelNames: ["method", "route", "status_class"],
      buckets: REQUEST_BUCKETS,
      registers,
    });

    this.placements = new Counter({
      name: "shoal_placements_total",
      help: "Executions placed on a node by this orchestrator (in a cluster, the one that runs the jobs duty), by job type",
      labelNames: ["type"],
      registers,
    });
    this.placementLatency = new Histogram({
      name: "shoal_placement_latency_seconds",
      help:
        "Seconds from a job's submission to its first placement, per execution placed then, by this orchestrator " +
        "(time in the queue included; replacements and top-ups are not counted), by job type",
      labelNames: ["type"],
      buckets: PLACEMENT_BUCKETS,
      registers,
    });
    // Every job type from the start: a rate over a series that appears with its first placement misses that one.
    for (const type of JobType.literals) {
      this.placements.inc({ type }, 0);
      this.placementLatency.zero({ type });
    }
    this.deadlineLateness = new Histogram({
      name: "shoal_deadline_lateness_seconds",
      help:
        "How late this orchestrator's deadline timer fired (timeouts, resends, drains, backoffs): at each firing, " +
        "the most overdue deadline's delay from its instant, or from the timer's arming if that instant had passed",
      buckets: LATENESS_BUCKETS,
      registers,
    });
    registerBuildInfo(this.registry, "orchestrator");

    const ask = this.ask.bind(this);
    // One figure of every collector of a kind, added up.
    const sum = <K extends "eventStream" | "encodedEvents">(kind: K, figure: keyof ReturnType<MetricCollectors[K]>) => {
      let total = 0;
      ask(kind, (figures) => (total += figures[figure] as number));
      return total;
    };
    const eventStreamFigure = (name: string, help: string, figure: keyof EventStreamFigures) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(sum("eventStream", figure));
        },
      });
    eventStreamFigure("shoal_event_stream_clients", "Clients of the HTTP event stream", "clients");
    eventStreamFigure(
      "shoal_event_stream_buffered_bytes",
      "Bytes sent to event stream clients that their connections still hold, all clients together",
      "bufferedBytes",
    );
    eventStreamFigure(
      "shoal_event_stream_ring_bytes",
      "Bytes of the newest events' stream messages held for clients switching from the store to live",
      "ringBytes",
    );
    eventStreamFigure(
      "shoal_event_stream_catching_up",
      "Event stream clients reading the store in their catch-up turn (at most API.EventStream.MaxCatchUps)",
      "catchingUp",
    );
    eventStreamFigure(
      "shoal_event_stream_catch_up_waiting",
      "Event stream clients waiting in line for a catch-up turn",
      "waitingForTurn",
    );
    // The cache counts since start: each scrape sets the counter to the total (a counter never goes down; neither do
    // they), so the hot path pays a number increment, not a prom-client inc.
    const encodedCount = (name: string, help: string, figure: "hits" | "misses") =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(sum("encodedEvents", figure));
        },
      });
    encodedCount(
      "shoal_encoded_events_hits_total",
      "Events' wire forms (NATS payload, stream message) taken from the shared cache of encoded events",
      "hits",
    );
    encodedCount(
      "shoal_encoded_events_misses_total",
      "Events encoded because the shared cache of encoded events did not hold them",
      "misses",
    );
    new Gauge({
      name: "shoal_encoded_events_bytes",
      help: "Bytes of encoded events the shared cache holds (the newest, within its bound)",
      registers,
      collect() {
        this.set(sum("encodedEvents", "heldBytes"));
      },
    });
    new Gauge({
      name: "shoal_nodes",
      help: "Nodes in the cluster by health and membership (deleted nodes excluded)",
      labelNames: ["health", "membership"],
      registers,
      collect() {
        this.reset();
        ask("nodes", (counts) => {
          for (const { health, membership, count } of counts) this.inc({ health, membership }, count);
        });
      },
    });
    new Gauge({
      name: "shoal_jobs",
      help: `Jobs by type and state, ${PROJECTED}`,
      labelNames: ["type", "state"],
      registers,
      collect() {
        this.reset();
        ask("jobs", (counts) => {
          for (const { type, state, count } of counts) this.inc({ type, state }, count);
        });
      },
    });
    new Gauge({
      name: "shoal_job_queue_depth",
      help: `Jobs waiting for a node that can take them (state Queued), ${PROJECTED}`,
      registers,
      collect() {
        let queued = 0;
        ask("jobs", (counts) => {
          for (const { state, count } of counts) if (state === "Queued") queued += count;
        });
        this.set(queued);
      },
    });
    new Gauge({
      name: "shoal_executions",
      help: `Executions by state, ${PROJECTED}`,
      labelNames: ["state"],
      registers,
      collect() {
        this.reset();
        ask("executions", (counts) => {
          for (const { state, count } of counts) this.inc({ state }, count);
        });
      },
    });
    const drains = new Gauge({
      name: "shoal_node_drains",
      help: `Nodes drained and not undrained, by drain status (draining, drained, expired), ${PROJECTED}`,
      labelNames: ["status"],
      registers: [],
    });
    new Gauge({
      name: "shoal_nodes_cordoned",
      help: `Nodes cordoned by an operator (drains are counted apart: shoal_node_drains), ${PROJECTED}`,
      registers,
      collect() {
        let cordoned = 0;
        drains.reset();
        ask("nodeRestrictions", (figures) => {
          cordoned += figures.cordoned;
          for (const { status, count } of figures.drains) drains.inc({ status }, count);
        });
        this.set(cordoned);
      },
    });
    this.registry.registerMetric(drains);
    // A gauge whose collect() fills its companions is registered before them: the registry reads
    // each metric in registration order, the synchronous part of one before the next.
    const positions = new Gauge({
      name: "shoal_processor_position",
      help: "Last store position each processor has handled",
      labelNames: ["processor"],
      registers: [],
    });
    new Gauge({
      name: "shoal_processor_lag_events",
      help: "Events between the store's head and each processor's checkpoint",
      labelNames: ["processor"],
      registers,
      collect() {
        this.reset();
        positions.reset();
        ask("processors", (progress) => {
          for (const { name, position, lag } of progress) {
            this.set({ processor: name }, lag);
            positions.set({ processor: name }, position);
          }
        });
      },
    });
    this.registry.registerMetric(positions);
    const passivated = new Gauge({
      name: "shoal_actors_passivated",
      help: "Entities known but not in memory (loaded again on demand), by entity kind",
      labelNames: ["entity"],
      registers: [],
    });
    new Gauge({
      name: "shoal_actors_resident",
      help: "Entity actors held in memory, by entity kind",
      labelNames: ["entity"],
      registers,
      collect() {
        this.reset();
        passivated.reset();
        ask("actors", (counts) => {
          for (const { entity, resident, passivated: unloaded } of counts) {
            this.inc({ entity }, resident);
            passivated.inc({ entity }, unloaded);
          }
        });
      },
    });
    this.registry.registerMetric(passivated);
    const lagP50 = new Gauge({
      name: "shoal_event_loop_lag_p50_seconds",
      help: "Median event-loop delay since the previous scrape",
      registers: [],
    });
    const lagP99 = new Gauge({
      name: "shoal_event_loop_lag_p99_seconds",
      help: "99th percentile event-loop delay since the previous scrape",
      registers: [],
    });
    new Gauge({
      name: "shoal_event_loop_lag_max_seconds",
      help: "Longest event-loop delay since the previous scrape: how long nothing else (heartbeats, HTTP) could run",
      registers,
      collect() {
        const snapshot = takeEventLoopLag();
        lagP50.set(snapshot.p50Seconds);
        lagP99.set(snapshot.p99Seconds);
        this.set(snapshot.maxSeconds);
      },
    });
    this.registry.registerMetric(lagP50);
    this.registry.registerMetric(lagP99);
  }

  /**
   * Adds a source of figures asked on every scrape; returns a function that removes it (call it
   * when the component stops, so a stopped component is not asked).
   */
  registerCollector<K extends CollectorKind>(kind: K, collector: MetricCollectors[K]): () => void {
    if (kind === "deadlines") this.deadlinesGauge();
    if (kind === "cluster") this.clusterGauges();
    const set = this.collectors[kind] as Set<MetricCollectors[K]>;
    set.add(collector);
    return () => set.delete(collector);
  }

  /** Registered in cluster mode only: a sole orchestrator has no partitions or duties to report. */
  private clusterGauges(): void {
    if (this.registry.getSingleMetric("shoal_cluster_partitions_held") !== undefined) return;
    const registers = [this.registry];
    const ask = this.ask.bind(this);
    new Gauge({
      name: "shoal_cluster_partitions_held",
      help: "Partitions this orchestrator owns now (it writes their nodes' health)",
      registers,
      collect() {
        let held = 0;
        ask("cluster", (figures) => (held += figures.partitionsHeld));
        this.set(held);
      },
    });
    new Gauge({
      name: "shoal_cluster_members",
      help: "Orchestrators this one hears from, itself included",
      registers,
      collect() {
        let members = 0;
        ask("cluster", (figures) => (members = Math.max(members, figures.members)));
        this.set(members);
      },
    });
    new Gauge({
      name: "shoal_cluster_duty_held",
      help: "1 for each duty (publisher, jobs) this orchestrator runs now, 0 for the others",
      labelNames: ["duty"],
      registers,
      collect() {
        this.reset();
        ask("cluster", (figures) => {
          for (const { name, held } of figures.duties) this.set({ duty: name }, held ? 1 : 0);
        });
      },
    });
  }

  /** Registered with the first scheduler: until one exists, a 0 would claim there are no deadlines. */
  private deadlinesGauge(): void {
    if (this.registry.getSingleMetric("shoal_deadlines_scheduled") !== undefined) return;
    const ask = this.ask.bind(this);
    new Gauge({
      name: "shoal_deadlines_scheduled",
      help: "Deadlines held by the deadline scheduler's heap",
      registers: [this.registry],
      collect() {
        let total = 0;
        ask("deadlines", (count) => (total += count));
        this.set(total);
      },
    });
  }

  /**
   * Gives `use` each registered collector's answer; one broken collector must not take the whole scrape down with it.
   */
  private ask<K extends CollectorKind>(kind: K, use: (answer: ReturnType<MetricCollectors[K]>) => void): void {
    for (const collector of this.collectors[kind]) {
      try {
        use(collector() as ReturnType<MetricCollectors[K]>);
      } catch (err) {
        this.logger.warn(
          { err, collector: kind },
          "a metrics collector failed; its figures are left out of this scrape",
        );
      }
    }
  }

  heartbeatReceived(): void {
    this.heartbeatsSinceScrape++;
  }

  /** One durable commit of `batchSize` events (called by the store, once per commit however many appends shared it). */
  observeCommit(batchSize: number): void {
    this.commitBatch.observe(batchSize);
  }

  /**
   * Events this orchestrator appended, and the store position of the last one (the head the processors' lag is measured
   * from).
   */
  observeAppend(events: number, position: number): void {
    this.appendedSinceScrape += events;
    if (position > this.appendedPosition) this.appendedPosition = position;
  }

  /** The highest store position this orchestrator has appended or recovered. */
  get headPosition(): number {
    return this.appendedPosition;
  }

  /** What recovery found at the end of the store, before anything is appended. */
  observeHead(position: number): void {
    if (position > this.appendedPosition) this.appendedPosition = position;
  }

  /**
   * One execution of a job of `type` placed (its Create stored); `sinceSubmissionMs` when it is part of its job's first
   * placement: how long the job waited for it.
   */
  placed(type: JobType, sinceSubmissionMs: number | undefined): void {
    this.placements.inc({ type });
    if (sinceSubmissionMs !== undefined) this.placementLatency.observe({ type }, Math.max(0, sinceSubmissionMs) / 1000);
  }

  /** Due deadlines fired, the most overdue `lateMs` after it could have. */
  deadlineFired(lateMs: number): void {
    this.deadlineLateness.observe(lateMs / 1000);
  }

  eventStreamCutOff(): void {
    this.eventStreamCutOffs.inc();
  }

  natsReconnected(): void {
    this.natsReconnects.inc();
  }

  /**
   * `route` is the matched route's pattern (`/api/v1/orchestrator/nodes/:id`) or UNMATCHED_ROUTE, never the raw URL.
   */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.requests.observe({ method, route, status_class: `${Math.floor(statusCode / 100)}xx` }, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition of Shoal's metrics followed by the process's. */
  scrape(): Promise<string> {
    return exposition(this.registry);
  }
}
