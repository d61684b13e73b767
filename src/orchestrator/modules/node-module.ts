import { hostname } from "node:os";
import { type Clock, systemClock } from "../../actors/clock.ts";
import { HealthThresholds } from "../../actors/health-thresholds.ts";
import { clusterSettings } from "../../cluster/cluster-settings.ts";
import { nodeKind } from "../../actors/node-kind.ts";
import { NodeManager } from "../../actors/node-manager.ts";
import { NodeProtocolHandler } from "../../actors/node-protocol-handler.ts";
import type { NodeInfo } from "../../events/catalog/node-info.ts";
import { builtInLabels } from "../../labels/built-in-labels.ts";
import { machinePlatform } from "../../labels/go-platform.ts";
import type { CatchUp } from "../../projections/catch-up.ts";
import { NodeIndex } from "../../projections/node-index/node-index.ts";
import { nodeViewsLane } from "../../projections/node-views-lane.ts";
import { NodeViews } from "../../projections/node-views.ts";
import { PlacementFleet } from "../../projections/placement-fleet.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { nodeStateSnapshotPath, readNodeStateSnapshot } from "../../snapshots/node-state-snapshot-file.ts";
import { NodeStateSnapshotter } from "../../snapshots/node-state-snapshotter.ts";
import { AsOfSeeds } from "../../snapshots/as-of-seeds.ts";
import { NATS_DRAIN_TIMEOUT_MS } from "../../transport/close-nats-connection.ts";
import { buildVersion } from "../../version.ts";
import { CATCH_UP_STALL_MS, Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";

/** A gap this long in our own event loop is a stall: nodes' silence over it is not held against them. */
const STALL_THRESHOLD_MS = 1_000;

/** What the node module offers the others. */
export interface NodeModule extends Module {
  readonly manager: NodeManager;
  /** The node read model; placement's fleet and the list's index follow it, one node change at a time. */
  readonly views: NodeViews;
  readonly index: NodeIndex;
  readonly fleet: PlacementFleet;
  /** This orchestrator's own node. */
  readonly self: NodeInfo;
  /** The node-state snapshots kept along the log, where the node read model as of a past moment starts from. */
  readonly seeds: AsOfSeeds;
  /** The node read model's processor (follow on). */
  readonly lane: Later<ProcessorProgress>;
  /** The store's head at start: what every read model folds up to before it serves, where new-event lanes begin. */
  readonly headAtStart: Later<number>;
  /** The head at start, or this orchestrator's own registration after it: what the job read model catches up to. */
  readonly startPosition: Later<number>;
}

function selfInfo(nodeId: string, labels: Readonly<Record<string, string>>): NodeInfo {
  const platform = machinePlatform();
  return {
    NodeID: nodeId,
    NodeType: "Requester",
    Hostname: hostname(),
    Labels: { ...builtInLabels(nodeId, platform), ...labels },
    BacalhauVersion: { GitVersion: buildVersion().GitVersion, ...platform },
  };
}

function newNodeManager(context: OrchestratorContext, index: NodeIndex, clock: Clock): NodeManager {
  const { config, store, logger, deadlines, listening } = context;
  const access = context.nats.access;
  const orchestratorSilenceMs = clusterSettings(config)?.leaseTtlMs;
  return new NodeManager({
    deadlines,
    onResources: (id, resources) => index.setCapacity(id, resources?.AvailableCapacity),
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
    ...(context.cluster.clustered ? { ownership: context.cluster } : {}),
    self: context.nodeId,
    // A live orchestrator announces itself at least once a lease TTL, or it has lost its leases by then.
    ...(orchestratorSilenceMs === undefined ? {} : { orchestratorSilenceMs }),
  });
}

/**
 * Compute nodes and the orchestrators' own: the node actors and their liveness (NodeManager), the node read model with
 * its index and placement's fleet, the node-state snapshot, and the compute protocol over NATS.
 */
export function nodeModule(context: OrchestratorContext): NodeModule {
  const { config, clock, store, logger, processors, stops } = context;
  const { nc, access, joinToken } = context.nats;
  const index = new NodeIndex();
  const manager = newNodeManager(context, index, clock);
  stops.add({ name: "stopping the node manager", run: () => manager.stop() });
  // Counted on /metrics by the module that owns them (shoal_actors_resident{entity="node"}), as every kind's are.
  context.metrics.registerCollector("actors", () => {
    const { resident, passivated } = manager.actorStats;
    return [{ entity: nodeKind.category, resident, passivated }];
  });
  const fleet = new PlacementFleet();
  const { cluster } = context;
  // Among several orchestrators, the others' writes reach this one's node manager through the read model.
  let observing = false;
  const views = new NodeViews((id, _before, after) => {
    index.update(id, after);
    fleet.changed(after);
    if (observing) manager.observe(after);
  });
  // Another orchestrator's announcement is its node's heartbeat.
  cluster.onMemberHeard((member) => manager.orchestratorHeard(member));
  cluster.onPartition({
    gained: (partition) => {
      const armed = manager.armWhere((id) => cluster.partitionOf(id) === partition);
      logger.debug({ partition, nodes: armed }, "partition taken: its nodes' health deadlines are armed");
    },
    lost: (partition) => {
      const dropped = manager.disarmWhere((id) => cluster.partitionOf(id) === partition);
      logger.debug({ partition, nodes: dropped }, "partition let go: its nodes' health is another's to write");
    },
  });
  const self = selfInfo(context.nodeId, config.Labels);
  const lane = new Later<ProcessorProgress>("the node-views processor", "follow");
  const headAtStart = new Later<number>("the store's head at start", "recover");
  const startPosition = new Later<number>("the store position after the node's own registration", "catch up");
  const snapshotPath = nodeStateSnapshotPath(config.DataDir);
  const snapshotter = new Later<NodeStateSnapshotter>("the node-state snapshotter", "recover");
  const seeds = new AsOfSeeds(
    AsOfSeeds.dirOf(config.DataDir),
    config["Orchestrator.Audit.AsOf.Snapshots"],
    logger.child({ component: "snapshots" }),
  );
  const catchUp = new Later<CatchUp>("the node read model's catch-up", "follow");
  let viewsFrom = 0;
  let fromSnapshot = false;

  return {
    name: "nodes",
    manager,
    views,
    index,
    fleet,
    self,
    seeds,
    lane,
    headAtStart,
    startPosition,

    async recover() {
      // A snapshot of every node's state lets the node read model skip the events it covers; the
      // stream stays the truth (anything wrong with the snapshot: a full replay).
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
      // Everything stored now: the node read model folds up to here before the node manager adopts what it folded.
      const head = headAtStart.set(await store.headPosition());
      context.metrics.observeHead(head);
      // Until the read model has caught up, the index is told once per changed node, not per event.
      views.hold();
      if (snapshot) views.seed(snapshot.views);
      snapshotter.set(
        new NodeStateSnapshotter(
          {
            path: snapshotPath,
            views: () => views.all(),
            clock,
            logger: logger.child({ component: "snapshots" }),
            written: (path, position) => void seeds.keep(path, position),
          },
          snapshot,
        ),
      );
      viewsFrom = snapshot?.position ?? 0;
      fromSnapshot = snapshot !== undefined;
    },

    follow() {
      const nodeSnapshotter = snapshotter.get();
      const nodesCatchUp = nodeViewsLane(processors, views, {
        from: viewsFrom,
        head: headAtStart.get(),
        logger: logger.child({ component: "node-manager" }),
        clock,
        stallMs: CATCH_UP_STALL_MS,
        handled: (batch) => nodeSnapshotter.handled(batch),
      });
      catchUp.set(nodesCatchUp);
      lane.set(nodesCatchUp.lane);
    },

    async catchUp() {
      const progress = catchUp.get();
      // A corrupt node event stops start-up here, named (the views cannot fold past it).
      await progress.until();
      const indexing = performance.now();
      await views.release();
      const indexMs = Math.round(performance.now() - indexing);
      // What the read model folded is what the node manager knows: no second replay.
      manager.adoptRecovered(views.recovered());
      observing = cluster.clustered;
      logger.info(
        { nodes: manager.nodeCount, events: views.eventsFolded, fromSnapshot, ...progress.elapsed() },
        "recovered nodes from the event store",
      );
      const selfResult = await manager.registerSelf(self);
      // The store says which keys are live; until now the ones the previous config admitted were in.
      if (access) {
        await access.replaceAll(manager.activeCredentials());
        // A crash between a revocation's event and its push to NATS must not leave the key in.
        await access.revokeStale(manager.revokedCredentials());
        logger.info({ nodes: access.boundNodes }, "NATS admits the joined nodes' keys");
      }
      startPosition.set(Math.max(headAtStart.get(), selfResult.position ?? 0));
      logger.info({ nodes: index.size, indexMs }, "read model caught up; node list indexed");
    },

    arm() {
      snapshotter.get().start();
    },

    listen() {
      const protocol = new NodeProtocolHandler(nc, manager, {
        joinToken: joinToken.token,
        enforcesNodeKeys: access !== undefined,
        ...(access ? { nodeJwt: (id: string, key: string) => access.userJwtFor(id, key) } : {}),
        logger: logger.child({ component: "protocol" }),
        onHeartbeat: () => context.metrics.heartbeatReceived(),
        ...(cluster.clustered ? { cluster } : {}),
      });
      protocol.start();
      stops.add({
        name: "stopping the compute protocol",
        run: () => {
          // From here on this orchestrator hears no heartbeat: silence is no longer the nodes'.
          manager.stopJudging();
          return protocol.stop();
        },
        timeoutMs: NATS_DRAIN_TIMEOUT_MS,
      });
      // First of the node module's stop: the others hear no more of this orchestrator (an announcement after the
      // write would make its node HEALTHY again), then its node says it stopped, while the processors still run.
      stops.add({
        name: "marking this orchestrator's node stopped",
        run: async () => {
          await cluster.leave();
          await manager.markSelfStopped(self.NodeID);
        },
      });
    },

    snapshot: { name: "node-state", write: () => snapshotter.get().stop() },
  };
}
