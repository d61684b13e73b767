import { join } from "node:path";
import { Cause, Context, Effect, Exit, Layer, Scope } from "effect";
import type { Logger } from "pino";
import { type Clock, systemClock } from "../actors/clock.ts";
import { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import { Listening } from "../actors/listening.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { SqliteEventStore } from "../events/sqlite/sqlite-event-store.ts";
import type { CheckpointStore, EventStore } from "../events/store/event-store.ts";
import type { StopSteps } from "../lifecycle/stop-steps.ts";
import { ShoalMetrics } from "../metrics/shoal-metrics.ts";
import { ENCODED_EVENTS_BYTES, EncodedEvents } from "../projections/encoded-events.ts";
import { ProcessorHost } from "../projections/processor-host.ts";
import { redactUrl } from "../security/redact-url.ts";
import { Nats, type NatsService, StartupError, Store, natsLayer, storeLayer } from "./services.ts";
import { StoreHealth } from "./store-health.ts";
import { ClusterRole } from "../cluster/cluster-role.ts";
import { clusterSettings } from "../cluster/cluster-settings.ts";
import { TransportWatch } from "./transport-watch.ts";

/** What every module's phases share: the services opened at start, the one clock and deadline heap, the stop steps. */
export interface OrchestratorContext {
  readonly config: ShoalConfig;
  readonly logger: Logger;
  readonly clock: Clock;
  /** This orchestrator's own node id. */
  readonly nodeId: string;
  /** The event store, as its health check sees every write. */
  readonly store: EventStore & CheckpointStore;
  readonly storeHealth: StoreHealth;
  readonly nats: NatsService;
  readonly transport: TransportWatch;
  readonly metrics: ShoalMetrics;
  /** One heap for every entity's deadlines: nodes', jobs' and executions'. */
  readonly deadlines: DeadlineScheduler;
  /**
   * Whether the orchestrator hears its nodes: not before it takes their reports, however long start-up takes, nor
   * while its transport is down. Node health, silent nodes and answer bounds all go by it.
   */
  readonly listening: Listening;
  /** Each event's JSON encoded once, for the NATS publisher and the event stream alike. */
  readonly encodedEvents: EncodedEvents;
  /** One store subscription for every read model, workflow and the publisher, each at its own pace. */
  readonly processors: ProcessorHost;
  readonly stops: StopSteps;
  /** False: nodes' execution reports are left to another handler (work-protocol tests record them). */
  readonly takeExecutionReports: boolean;
  /** Which entities this orchestrator writes for and which duties it runs: all of them, unless in a cluster. */
  readonly cluster: ClusterRole;
}

// Its own steps are bounded (NATS drain, nats-server SIGKILL, store close); this is the backstop.
const SCOPE_CLOSE_TIMEOUT_MS = 15_000;

function storeDescription(config: ShoalConfig): string {
  return config["EventStore.URL"] !== ""
    ? `KurrentDB at ${redactUrl(config["EventStore.URL"])}`
    : `SQLite store ${join(config.DataDir, "shoal.db")}`;
}

/**
 * The open phase: the store and NATS picked from config (as effect Layers), the store first (a store that cannot be
 * written stops start-up before a nats-server is started on DataDir), then the services every module shares.
 */
export async function openContext(
  config: ShoalConfig,
  logger: Logger,
  stops: StopSteps,
  options: { readonly nodeId: string; readonly clock?: Clock; readonly takeExecutionReports?: boolean },
): Promise<OrchestratorContext> {
  const clock = options.clock ?? systemClock;
  // Before the store or NATS is opened: a cluster configured on SQLite or an embedded nats-server is refused here.
  const settings = clusterSettings(config);
  const metrics = new ShoalMetrics(logger.child({ component: "metrics" }));
  const deadlines = new DeadlineScheduler(clock, (lateMs) => metrics.deadlineFired(lateMs));
  const scope = Effect.runSync(Scope.make());
  stops.add({
    name: "closing NATS and the store",
    run: () => Effect.runPromise(Scope.close(scope, Exit.void)),
    timeoutMs: SCOPE_CLOSE_TIMEOUT_MS,
  });
  const built = await Effect.runPromiseExit(
    Layer.buildWithScope(
      Layer.provideMerge(natsLayer(config, logger, { clock, deadlines }), storeLayer(config, logger)),
      scope,
    ),
  );
  if (Exit.isFailure(built)) {
    const error = Cause.squash(built.cause);
    throw error instanceof StartupError ? error : new StartupError(String(error));
  }
  const inner = Context.get(built.value, Store);
  const storeHealth = new StoreHealth(inner, storeDescription(config), (events, position) =>
    metrics.observeAppend(events, position),
  );
  const store = storeHealth.store;
  const nats = Context.get(built.value, Nats);
  const transport = new TransportWatch(nats.nc, nats.url, nats.server, logger.child({ component: "transport" }), {
    clock,
    deadlines,
  });
  transport.onReconnect(() => metrics.natsReconnected());
  transport.start();
  // SQLite commits appends together (EventStoreDB has no such batch): how many share a commit.
  if (inner instanceof SqliteEventStore)
    stops.add({
      name: "unwatching store commits",
      run: inner.onCommit((batch) => metrics.observeCommit(batch.events)),
    });
  const listening = new Listening(clock);
  transport.onChange((down) => {
    if (down !== undefined) return listening.transportDown(down);
    listening.transportUp();
    // A key change that could not be applied while NATS was down is applied now.
    nats.access?.catchUp().catch((err: unknown) => logger.error({ err }, "NATS has still not applied the nodes' keys"));
  });
  stops.add({ name: "stopping the transport watch", run: () => transport.stop() });
  if (transport.down !== undefined) listening.transportDown(transport.down);
  const encodedEvents = new EncodedEvents(ENCODED_EVENTS_BYTES);
  metrics.registerCollector("encodedEvents", () => ({
    hits: encodedEvents.hits,
    misses: encodedEvents.encodings,
    heldBytes: encodedEvents.heldBytes,
  }));
  return {
    config,
    logger,
    clock,
    nodeId: options.nodeId,
    store,
    storeHealth,
    nats,
    transport,
    metrics,
    deadlines,
    listening,
    encodedEvents,
    processors: new ProcessorHost({
      store,
      clock,
      deadlines,
      logger: logger.child({ component: "processors" }),
      storeHead: () => metrics.headPosition,
    }),
    stops,
    takeExecutionReports: options.takeExecutionReports !== false,
    cluster: new ClusterRole(settings?.partitions, logger.child({ component: "cluster" })),
  };
}
