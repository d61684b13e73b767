import { hostname, arch, platform } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { Cause, Context, Effect, Exit, Layer, Scope } from "effect";
import type { Logger } from "pino";
import { type Clock, systemClock } from "../actors/clock.ts";
import { HealthThresholds } from "../actors/health-thresholds.ts";
import { NodeManager } from "../actors/node-manager.ts";
import { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import { JobControl } from "../actors/job-control.ts";
import { Listening } from "../actors/listening.ts";
import { JobHistory } from "../projections/jobs/job-history.ts";
import { JobViews } from "../projections/jobs/job-views.ts";
import { jobDefaultsOf } from "./job-defaults-config.ts";
import { jobLimitsOf } from "./job-limits-config.ts";
import { jobViewsSnapshotPath, readJobViewsSnapshot, writeJobViewsSnapshot } from "../snapshots/job-views-snapshot.ts";
import { NodeProtocolHandler } from "../actors/node-protocol-handler.ts";
import { buildApi } from "../api/api-server.ts";
import { JobLogs } from "../api/jobs/job-logs.ts";
import type { ShoalConfig } from "../config/keys.ts";
import type { NodeInfo } from "../events/catalog/node-info.ts";
import { NatsEventPublisher } from "../projections/nats-event-publisher.ts";
import { NodeHistory } from "../projections/node-history.ts";
import { NodeIndex } from "../projections/node-index/node-index.ts";
import { NodeViews } from "../projections/node-views.ts";
import { PlacementFleet } from "../projections/placement-fleet.ts";
import type { ProcessorProgress } from "../projections/processor.ts";
import { ProcessorHost } from "../projections/processor-host.ts";
import { nodeStateSnapshotPath, readNodeStateSnapshot } from "../snapshots/node-state-snapshot-file.ts";
import { NodeStateSnapshotter } from "../snapshots/node-state-snapshotter.ts";
import { lockDataDir } from "../fs/data-dir-lock.ts";
import { ShoalMetrics } from "../metrics/shoal-metrics.ts";
import { wireMetrics } from "./wire-metrics.ts";
import { forgetDeletedNodes } from "../workflows/forget-deleted-nodes.ts";
import { WorkflowHost } from "../workflows/workflow-host.ts";
import { isNodeGain, jobFlow } from "../workflows/jobs/job-flow.ts";
import { nodeReactions } from "../workflows/nodes/node-reactions.ts";
import { afterReadModel } from "../workflows/after-read-model.ts";
import { NodeReactionRunner } from "../workflows/nodes/node-reaction-runner.ts";
import { entityIdOf } from "../events/streams.ts";
import { drainFlow } from "../workflows/nodes/drain-flow.ts";
import { NodeDrainer } from "../workflows/nodes/node-drainer.ts";
import { JobRunner } from "../workflows/jobs/job-runner.ts";
import { endFailedJobStep } from "../workflows/jobs/failed-job-step.ts";
import { failRefusedJobs } from "../workflows/jobs/refused-jobs.ts";
import { NodeWorkClient } from "../transport/node-work-client.ts";
import { NodeLogClient } from "../transport/node-log-client.ts";
import { ExecutionReportHandler } from "../actors/execution-report-handler.ts";
import { ExecutionReportsOnActors } from "../actors/execution-reports-on-actors.ts";
import { boundedStep } from "../lifecycle/bounded-step.ts";
import { redactUrl } from "../security/redact-url.ts";
import { NATS_DRAIN_TIMEOUT_MS } from "../transport/close-nats-connection.ts";
import { buildVersion } from "../version.ts";
import type { JoinToken } from "./nats-credentials.ts";
import { resolveApiAuth } from "./api-auth.ts";
import { resolveNodeIdentity } from "./node-identity.ts";
import { JetStreamWatch } from "./jetstream-watch.ts";
import { Nats, StartupError, Store, natsLayer, storeLayer } from "./services.ts";
import { SqliteEventStore } from "../events/sqlite/sqlite-event-store.ts";
import { StoreHealth } from "./store-health.ts";
import { TransportWatch } from "./transport-watch.ts";
import { leafLoginRevoker } from "./leaf-login-revoker.ts";

export interface RunningOrchestrator {
  readonly nodeId: string;
  readonly apiUrl: string;
  readonly natsUrl: string;
  readonly manager: NodeManager;
  /** The job and execution actors, as the API drives them (for in-process callers). */
  readonly jobs: JobControl;
  /** The NATS event publisher's progress: `position` is the last event JetStream acknowledged. */
  readonly publisher: ProcessorProgress;
  /** What compute nodes join with (Compute.Auth.Token), and the file it is kept in when generated. */
  readonly joinToken: JoinToken;
  /** The embedded NATS server's login for downstream event readers. */
  /** The embedded nats-server's login for downstream systems: a NATS credentials file (JWT and seed). */
  readonly eventsReader: { readonly credsFile: string } | undefined;
  /** The generated admin API key's file, when API.Auth.Users is empty. */
  readonly adminKey?: { readonly path: string; readonly created: boolean };
  stop(): Promise<void>;
}

interface Cleanup {
  readonly name: string;
  readonly run: () => Promise<unknown> | unknown;
  /** After the bound: close without waiting. */
  readonly hard?: () => unknown;
  readonly timeoutMs?: number;
}

const STOP_STEP_TIMEOUT_MS = 5_000;
/** A gap this long in our own event loop is a stall: nodes' silence over it is not held against them. */
const STALL_THRESHOLD_MS = 1_000;
/** How often every node holding work is checked against its state (what no workflow step covered). */
const SWEEP_EVERY_MS = 60_000;
// Its own steps are bounded (NATS drain, nats-server SIGKILL, store close); this is the backstop.
const SCOPE_CLOSE_TIMEOUT_MS = 15_000;

function storeDescription(config: ShoalConfig): string {
  return config["EventStore.URL"] !== ""
    ? `EventStoreDB at ${redactUrl(config["EventStore.URL"])}`
    : `SQLite store ${join(config.DataDir, "shoal.db")}`;
}

function selfInfo(nodeId: string, labels: Readonly<Record<string, string>>): NodeInfo {
  return {
    NodeID: nodeId,
    NodeType: "Requester",
    Hostname: hostname(),
    Labels: { "Operating-System": platform(), Architecture: arch(), ...labels },
    BacalhauVersion: { GitVersion: buildVersion().GitVersion, GOOS: platform(), GOARCH: arch() },
  };
}

/**
 * The composition root of `shoal serve`: picks the store and NATS from config (as effect
 * Layers), recovers every node from the store, then opens NATS and the API. Nothing is served
 * before the read model has caught up with what was recovered.
 */
export async function startOrchestrator(
  config: ShoalConfig,
  logger: Logger,
  options: {
    clock?: Clock;
    /** Names this process to a second one refused the DataDir. */
    command?: string;
    /** False: nodes' execution reports are left to another handler (work-protocol tests record them). */
    takeExecutionReports?: boolean;
  } = {},
): Promise<RunningOrchestrator> {
  const clock = options.clock ?? systemClock;
  // Before anything else touches DataDir: a second orchestrator on it stops here, having
  // changed nothing (not the first one's nats-server, store, identity or credentials).
  const lock = lockDataDir(config.DataDir, options.command ?? "shoal serve");
  let nodeId: string;
  try {
    nodeId = resolveNodeIdentity(config.NodeID, config.DataDir);
  } catch (e) {
    lock.release();
    throw e;
  }
  const scope = Effect.runSync(Scope.make());
  // The store first, then NATS: a store that cannot be written stops start-up before a
  // nats-server is started on DataDir.
  const built = await Effect.runPromiseExit(
    Layer.buildWithScope(Layer.provideMerge(natsLayer(config, logger), storeLayer(config, logger)), scope),
  );
  if (Exit.isFailure(built)) {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    lock.release();
    const error = Cause.squash(built.cause);
    throw error instanceof StartupError ? error : new StartupError(String(error));
  }
  const metrics = new ShoalMetrics(logger.child({ component: "metrics" }));
  const inner = Context.get(built.value, Store);
  const storeHealth = new StoreHealth(inner, storeDescription(config), (events, position) =>
    metrics.observeAppend(events, position),
  );
  const store = storeHealth.store;
  const {
    nc,
    eventsNc,
    url: natsUrl,
    server: natsServer,
    jetStreamDir,
    joinToken,
    access,
    readerCredsFile,
  } = Context.get(built.value, Nats);
  const transport = new TransportWatch(nc, natsUrl, natsServer, logger.child({ component: "transport" }));
  transport.onReconnect(() => metrics.natsReconnected());
  transport.start();
  // Every step is bounded: a wedged NATS or store must not keep `serve` from exiting (docs/security.md, Faults).
  const cleanups: Cleanup[] = [
    // Last of all: the DataDir is free for another orchestrator only once this one has let go of it.
    { name: "releasing the DataDir lock", run: () => lock.release() },
    {
      name: "closing NATS and the store",
      run: () => Effect.runPromise(Scope.close(scope, Exit.void)),
      timeoutMs: SCOPE_CLOSE_TIMEOUT_MS,
    },
  ];
  // SQLite commits appends together (EventStoreDB has no such batch): how many share a commit.
  if (inner instanceof SqliteEventStore)
    cleanups.push({
      name: "unwatching store commits",
      run: inner.onCommit((batch) => metrics.observeCommit(batch.events)),
    });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const { name, run, hard, timeoutMs } of [...cleanups].reverse()) {
        await boundedStep(name, run, {
          timeoutMs: timeoutMs ?? STOP_STEP_TIMEOUT_MS,
          logger,
          ...(hard ? { hard } : {}),
        });
      }
    })());

  try {
    const { auth, adminKey } = resolveApiAuth(config, logger.child({ component: "api" }));
    const jobDefaults = jobDefaultsOf(config);
    const jobLimits = jobLimitsOf(config, jobDefaults);
    const nodeIndex = new NodeIndex();
    // One heap for every entity's deadlines: nodes', jobs' and executions'.
    const deadlines = new DeadlineScheduler(clock);
    // Whether the orchestrator hears its nodes: not before it takes their reports, however long start-up takes, nor
    // while its transport is down. Node health, silent nodes and answer bounds all go by it.
    const listening = new Listening(clock);
    const manager = new NodeManager({
      deadlines,
      onResources: (id, resources) => nodeIndex.setCapacity(id, resources?.AvailableCapacity),
      store,
      clock,
      logger: logger.child({ component: "node-manager" }),
      manualApproval: config["Orchestrator.NodeManager.ManualApproval"],
      ...(access ? { credentials: access } : {}),
      thresholds: new HealthThresholds(
        {
          disconnectMs: config["Orchestrator.NodeManager.DisconnectTimeout"],
          unknownMs: config["Orchestrator.NodeManager.UnknownTimeout"],
        },
        config["Orchestrator.NodeManager.Overrides"],
      ),
      // On the real clock only: a test's manual clock never stalls.
      ...(clock === systemClock ? { stallThresholdMs: STALL_THRESHOLD_MS } : {}),
      registrationLimits: {
        maxRegistrationsPerSecond: config["Orchestrator.NodeManager.MaxRegistrationsPerSecond"],
        registrationBurst: config["Orchestrator.NodeManager.RegistrationBurst"],
        maxPendingNodes: config["Orchestrator.NodeManager.MaxPendingNodes"],
      },
      reconnectLoginsPerSecond: config["Orchestrator.NodeManager.ReconnectLoginsPerSecond"],
      listening,
    });
    cleanups.push({ name: "stopping the node manager", run: () => manager.stop() });
    const jobLogger = logger.child({ component: "jobs" });
    const jobControl = new JobControl({
      store,
      clock,
      logger: jobLogger,
      deadlines,
      defaults: jobDefaults,
      limits: jobLimits,
      listening,
    });
    cleanups.push({ name: "stopping the job actors", run: () => jobControl.close() });
    transport.onChange((down) => {
      if (down !== undefined) return listening.transportDown(down);
      listening.transportUp();
      // A key change that could not be applied while NATS was down is applied now.
      access?.catchUp().catch((err: unknown) => logger.error({ err }, "NATS has still not applied the nodes' keys"));
    });
    cleanups.push({ name: "stopping the transport watch", run: () => transport.stop() });
    if (transport.down !== undefined) listening.transportDown(transport.down);
    // A snapshot of every node's state lets both folds below skip the events it covers; the
    // stream stays the truth (anything wrong with the snapshot: a full replay).
    const snapshotPath = nodeStateSnapshotPath(config.DataDir);
    const loaded = await readNodeStateSnapshot(snapshotPath, store);
    const snapshot = "snapshot" in loaded ? loaded.snapshot : undefined;
    if (snapshot)
      logger.info(
        { path: snapshotPath, nodes: snapshot.views.length, position: snapshot.position },
        "starting from the node-state snapshot",
      );
    else
      logger.info(
        { path: snapshotPath, reason: "reason" in loaded ? loaded.reason : "" },
        "no usable node-state snapshot: replaying every node stream",
      );
    const recovered = await manager.recover(snapshot && { position: snapshot.position, states: snapshot.views });
    const self = selfInfo(nodeId, config.Labels);
    const selfResult = await manager.registerSelf(self);
    // The store says which keys are live; until now the ones the previous config admitted were in.
    if (access) {
      await access.replaceAll(manager.activeCredentials());
      // A crash between a revocation's event and its push to NATS must not leave the key in.
      await access.revokeStale(manager.revokedCredentials());
      logger.info({ nodes: access.boundNodes }, "NATS admits the joined nodes' keys");
    }

    // JetStream is checked first: a NATS that cannot take cluster events stops start-up here.
    const publisher = new NatsEventPublisher(
      eventsNc,
      store,
      logger.child({ component: "event-publisher" }),
      Math.floor(config["Orchestrator.NATS.JetStreamMaxStore"] * 0.9),
      { clock, deadlines },
    );
    await publisher.start();
    // One store subscription feeds the read model and the publisher, each at its own pace.
    const processors = new ProcessorHost({
      store,
      clock,
      deadlines,
      logger: logger.child({ component: "processors" }),
      storeHead: () => metrics.headPosition,
    });
    // Placement's fleet follows the same views, one node change at a time.
    const fleet = new PlacementFleet();
    const views = new NodeViews((id, _before, after) => {
      nodeIndex.update(id, after);
      fleet.changed(after);
    });
    // Until the read model has caught up, the index is told once per changed node, not per event.
    views.hold();
    if (snapshot) views.seed(snapshot.views);
    // Recovery has already folded every event up to its position: the views start there, not from
    // the snapshot (or the beginning) again.
    views.seedStates(recovered.states, recovered.revisions);
    const snapshotter = new NodeStateSnapshotter(
      { path: snapshotPath, views: () => views.all(), clock, logger: logger.child({ component: "snapshots" }) },
      snapshot,
    );
    if (recovered.last) snapshotter.advanced(recovered.position, recovered.last, recovered.events);
    // A number, not `recovered`: a closure over it would keep every recovered state alive.
    const viewsFrom = recovered.position;
    const projection = processors.add({
      name: "node-views",
      // What recovery folded is the read model's checkpoint: it resumes right after it.
      checkpoints: { load: () => Promise.resolve(viewsFrom), save: () => Promise.resolve() },
      handle: (batch) => {
        for (const e of batch) views.handleEnvelope(e);
        snapshotter.handled(batch);
      },
    });
    const published = processors.add(publisher);
    // Jobs and executions: from the snapshot the last clean stop wrote (else from the start of the store).
    const jobSnapshotPath = jobViewsSnapshotPath(config.DataDir);
    const jobLoad = await readJobViewsSnapshot(jobSnapshotPath, store);
    const jobViews = new JobViews();
    if ("snapshot" in jobLoad) jobViews.seed(jobLoad.snapshot);
    const jobsFrom = "snapshot" in jobLoad ? jobLoad.snapshot.anchor.position : 0;
    logger.info(
      { path: jobSnapshotPath, position: jobsFrom, ...("reason" in jobLoad ? { reason: jobLoad.reason } : {}) },
      "job read model starting",
    );
    // Built on the seeded read model (its ledger starts from it); jobs run as a workflow: placed,
    // dispatched to their nodes, settled, cancelled (docs/jobs.md, Workflows).
    const work = new NodeWorkClient(nc);
    const jobRunner = new JobRunner({
      jobs: jobControl.jobs,
      executions: jobControl.executions,
      jobViews,
      // Read once a step runs, after the processors started: jobProjection is added below.
      jobViewsProgress: { waitFor: (position, timeoutMs) => jobProjection.waitFor(position, timeoutMs) },
      nodeViews: views,
      fleet: () => fleet.view(views),
      work,
      clock,
      deadlines,
      logger: logger.child({ component: "job-runner" }),
      answerTimeoutMs: config["Orchestrator.Scheduler.ExecutionAnswerTimeout"],
      transportDown: () => transport.down !== undefined,
      listening,
      refusal: (jobId, spec) => jobControl.storedJobRefusal(jobId, spec),
    });
    cleanups.push({ name: "stopping the job runner's resends", run: () => jobRunner.stop() });
    // Node drains (docs/nodes.md, Drain): a recorded workflow, and a pass per drain under way as executions change.
    const drainer = new NodeDrainer({
      manager,
      nodeViews: views,
      nodeViewsProgress: projection,
      jobViews,
      executions: jobControl.executions,
      work,
      place: (jobId, by) => jobRunner.placeFor(jobId, by),
      placeableElsewhere: (e) => jobRunner.placeableElsewhere(e),
      deadlines,
      clock,
      logger: logger.child({ component: "node-drain" }),
    });
    const jobProjection = processors.add({
      name: "job-views",
      checkpoints: { load: () => Promise.resolve(jobsFrom), save: () => Promise.resolve() },
      handle: (batch) => {
        try {
          for (const e of batch) jobViews.handleEnvelope(e);
        } finally {
          // The capacity ledger placement uses follows the read model, execution by execution (also what folded before
          // a failure).
          jobRunner.readModelFolded(batch);
        }
      },
    });
    processors.add(
      new WorkflowHost(forgetDeletedNodes, {
        store,
        checkpoints: store,
        handlers: { "node-liveness": (command) => manager.forgetIfGone(command.entityId) },
        logger: logger.child({ component: "workflows" }),
      }),
    );
    processors.add(
      new WorkflowHost(jobFlow, {
        store,
        checkpoints: store,
        handlers: jobRunner.handlers(),
        logger: logger.child({ component: "workflows" }),
        // A step that fails for its job's or execution's data ends that entity; the jobs after it go on.
        endEntity: endFailedJobStep({ jobs: jobControl.jobs, executions: jobControl.executions }),
      }),
    );
    // Work follows node state: lost with a silent (rate-limited), rejected or deleted node, stopped when it is back,
    // daemons follow labels (docs/jobs.md, Node reactions).
    const reactions = new NodeReactionRunner({
      work: jobRunner,
      byNode: jobViews.byNode,
      byNodeProgress: jobProjection,
      nodeViews: views,
      store,
      deadlines,
      clock,
      logger: logger.child({ component: "node-reactions" }),
      transportDown: () => listening.since === undefined,
      policy: {
        rate: config["Orchestrator.NodeManager.NodeEvictionRate"],
        secondaryRate: config["Orchestrator.NodeManager.SecondaryNodeEvictionRate"],
        unhealthyThreshold: config["Orchestrator.NodeManager.UnhealthyNodesThreshold"],
        largeClusterSize: config["Orchestrator.NodeManager.LargeClusterSizeThreshold"],
      },
    });
    cleanups.push({ name: "stopping the node reactions", run: () => reactions.stop() });
    // As the node manager gives every node its grace and a full DisconnectTimeout after a start, so does the queue of
    // silent nodes.
    const disconnectMs = config["Orchestrator.NodeManager.DisconnectTimeout"];
    const grace = () => reactions.holdUntil(Math.max(clock.now(), manager.silenceCountsFrom) + disconnectMs);
    grace();
    // After the node manager's own listener: its grace is the one this follows.
    listening.onResume(grace);
    listening.onPause(() => reactions.wake());
    // The silent nodes' queue as the last run left it (under the grace above), before the workflow's replayed steps
    // apply onto it.
    await reactions.recover();
    // Whether a node holds work is asked of the job read model once it has folded the node's event: every execution
    // placed on the node before it is counted.
    processors.add(
      afterReadModel(
        new WorkflowHost(nodeReactions(jobViews.byNode), {
          store,
          checkpoints: store,
          handlers: reactions.handlers(),
          logger: logger.child({ component: "workflows" }),
        }),
        jobProjection,
      ),
    );
    processors.add(
      new WorkflowHost(drainFlow, {
        store,
        checkpoints: store,
        handlers: drainer.handlers(),
        logger: logger.child({ component: "workflows" }),
      }),
    );
    // A node that joins, is approved or recovers: the jobs it could take are placed again (from now on; not recorded as
    // workflow steps).
    const nodesFrom = Math.max(recovered.position, selfResult.position ?? 0);
    processors.add({
      name: drainer.name,
      checkpoints: { load: () => Promise.resolve(nodesFrom), save: () => Promise.resolve() },
      handle: (batch) => drainer.handle(batch),
    });
    processors.add({
      name: "job-placement-on-node-gain",
      checkpoints: { load: () => Promise.resolve(nodesFrom), save: () => Promise.resolve() },
      handle: (batch) => {
        const gained = new Set<string>();
        for (const e of batch)
          if (isNodeGain(e.recorded.stream, e.recorded.type)) gained.add(entityIdOf(e.recorded.stream));
        if (gained.size === 0) return;
        jobRunner
          .retryQueued("a node may take more work", gained)
          .catch((err: unknown) => logger.error({ err }, "placing the queued jobs failed"));
      },
    });
    const backoffMs = config["Orchestrator.Scheduler.QueueBackoff"];
    if (backoffMs > 0) {
      const stopBackoff = deadlines.every("queue-backoff", backoffMs, () =>
        jobRunner.retryQueued().catch((err: unknown) => logger.error({ err }, "placing the queued jobs failed")),
      );
      cleanups.push({ name: "stopping the queue backoff", run: stopBackoff });
    }
    // After the processors stopped (cleanups run in reverse): the views' final state.
    cleanups.push({ name: "writing the node-state snapshot", run: () => snapshotter.stop() });
    cleanups.push({
      name: "writing the job-views snapshot",
      run: async () => {
        const snapshot = jobViews.snapshot();
        if (snapshot) await writeJobViewsSnapshot(jobSnapshotPath, snapshot);
      },
    });
    await processors.start();
    // Waits on JetStream acks: as bounded as a NATS drain.
    cleanups.push({
      name: "stopping the event processors",
      run: () => processors.stop(),
      timeoutMs: NATS_DRAIN_TIMEOUT_MS,
    });
    await projection.waitFor(Math.max(recovered.position, selfResult.position ?? 0), 120_000);
    const indexing = performance.now();
    await views.release();
    await jobProjection.waitFor(Math.max(recovered.position, selfResult.position ?? 0), 120_000);
    // Before anything is placed or sent: a stored job today's limits refuse ends here, with the reason.
    await failRefusedJobs(jobViews.allJobs(), jobControl, logger.child({ component: "job-limits" }));
    // The read model folded every job and execution with their deciders' evolve: their deadlines are armed from it.
    jobControl.armRecovered(jobViews.allJobs(), jobViews.allExecutions());
    // Executions on nodes deleted or rejected while the orchestrator was down are lost as well; silent nodes' wait
    // again.
    await reactions.sweep("found at start-up");
    const stopSweeps = deadlines.every("node-work-sweep", SWEEP_EVERY_MS, () =>
      reactions
        .sweep("found by the periodic check")
        .catch((err: unknown) => logger.error({ err }, "checking for nodes' lost work failed")),
    );
    cleanups.push({ name: "stopping the node-work checks", run: stopSweeps });
    // Drains under way: their deadlines armed again from the nodes' state, and a pass each.
    drainer.recover();
    // Work sent before a crash may never have reached its node (docs/jobs.md, Workflows).
    jobRunner.resumeDispatch(jobViews.allExecutions());
    // Placements a stop cut short (a rate-limited evaluation's rest, a top-up's timer) are made now, not at the next
    // QueueBackoff.
    jobRunner
      .retryQueued("the orchestrator started")
      .catch((err: unknown) => logger.error({ err }, "placing the waiting jobs at start failed"));
    logger.info({ jobs: jobViews.index.size }, "jobs read model caught up; their deadlines are armed");
    logger.info(
      { nodes: nodeIndex.size, indexMs: Math.round(performance.now() - indexing) },
      "read model caught up; node list indexed",
    );
    snapshotter.start();

    const protocol = new NodeProtocolHandler(nc, manager, {
      joinToken: joinToken.token,
      enforcesNodeKeys: access !== undefined,
      ...(access ? { nodeJwt: (id: string, key: string) => access.userJwtFor(id, key) } : {}),
      logger: logger.child({ component: "protocol" }),
      onHeartbeat: () => metrics.heartbeatReceived(),
    });
    protocol.start();
    cleanups.push({
      name: "stopping the compute protocol",
      run: () => protocol.stop(),
      timeoutMs: NATS_DRAIN_TIMEOUT_MS,
    });
    if (options.takeExecutionReports !== false) {
      const executionReports = new ExecutionReportHandler(nc, new ExecutionReportsOnActors(jobControl.executions), {
        enforcesNodeKeys: access !== undefined,
        logger: logger.child({ component: "execution-reports" }),
      });
      executionReports.start();
      cleanups.push({
        name: "stopping the execution reports",
        run: () => executionReports.stop(),
        timeoutMs: NATS_DRAIN_TIMEOUT_MS,
      });
    }
    // Nodes' heartbeats and answers are heard from here (the server holds the subscriptions): the reconnect grace and
    // each execution's answer bound count from now (a restart: the full bound).
    await nc.flush();
    listening.begin();

    metrics.observeHead(Math.max(recovered.position, selfResult.position ?? 0));
    wireMetrics(metrics, {
      manager,
      index: nodeIndex,
      processors: processors.processors,
    });
    const jetStream = new JetStreamWatch({
      nc: eventsNc,
      core: nc,
      ...(natsServer && jetStreamDir !== undefined ? { server: natsServer, storeDir: jetStreamDir } : {}),
      logger: logger.child({ component: "jetstream" }),
      deadlines,
    });
    jetStream.start();
    cleanups.push({ name: "stopping the JetStream watch", run: () => jetStream.stop() });
    const checks = [...transport.checks, jetStream, storeHealth];
    const leaves = access ? leafLoginRevoker(access) : undefined;
    // Job logs are read from the nodes over NATS (docs/jobs.md, Logs).
    const nodeLogs = new NodeLogClient(nc, logger.child({ component: "job-logs" }));
    nodeLogs.start();
    cleanups.push({ name: "stopping the job log reads", run: () => nodeLogs.stop() });
    const jobLogs = new JobLogs(jobViews, nodeLogs, { clock, deadlines });
    const api = buildApi({
      logger: logger.child({ component: "api" }),
      self,
      manager,
      views,
      index: nodeIndex,
      projection,
      history: new NodeHistory(store),
      jobs: { control: jobControl, views: jobViews, projection: jobProjection, history: new JobHistory(store) },
      jobLogs,
      auth,
      checks,
      metrics,
      ...(leaves ? { leaves } : {}),
    });
    try {
      await api.listen({ host: config["API.Host"], port: config["API.Port"] });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new StartupError(
        code === "EADDRINUSE"
          ? `API.Port ${config["API.Port"]} is already in use; choose another with -c API.Port=<port>`
          : `cannot start the API: ${(e as Error).message}`,
      );
    }
    cleanups.push({ name: "closing the API", run: () => api.close(), hard: () => api.server.closeAllConnections() });
    // Before the API closes (cleanups run last first): log streams end with an error instead of holding the close.
    cleanups.push({ name: "ending the job log streams", run: () => jobLogs.stop() });
    const address = api.server.address() as AddressInfo;
    const host = config["API.Host"] === "0.0.0.0" || config["API.Host"] === "::" ? "127.0.0.1" : config["API.Host"];
    const apiUrl = `http://${host}:${address.port}`;
    logger.info({ nodeId, api: apiUrl, nats: redactUrl(natsUrl) }, "orchestrator ready");
    const eventsReader = readerCredsFile === undefined ? undefined : { credsFile: readerCredsFile };
    return {
      nodeId,
      apiUrl,
      natsUrl,
      manager,
      jobs: jobControl,
      publisher: published,
      joinToken,
      eventsReader,
      ...(adminKey ? { adminKey } : {}),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
