import { hostname, arch, platform } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { Cause, Context, Effect, Exit, Layer, Scope } from "effect";
import type { Logger } from "pino";
import { type Clock, systemClock } from "../actors/clock.ts";
import { HealthThresholds } from "../actors/health-thresholds.ts";
import { NodeManager } from "../actors/node-manager.ts";
import { NodeProtocolHandler } from "../actors/node-protocol-handler.ts";
import { buildApi } from "../api/api-server.ts";
import type { ShoalConfig } from "../config/keys.ts";
import type { NodeInfo } from "../events/catalog/node-info.ts";
import { NatsEventPublisher } from "../projections/nats-event-publisher.ts";
import { NodeHistory } from "../projections/node-history.ts";
import { NodeViews } from "../projections/node-views.ts";
import { ProjectionRunner } from "../projections/projection-runner.ts";
import { boundedStep } from "../lifecycle/bounded-step.ts";
import { NATS_DRAIN_TIMEOUT_MS } from "../transport/close-nats-connection.ts";
import { buildVersion } from "../version.ts";
import { resolveNodeIdentity } from "./node-identity.ts";
import { Nats, StartupError, Store, natsLayer, storeLayer } from "./services.ts";
import { StoreHealth } from "./store-health.ts";
import { TransportWatch } from "./transport-watch.ts";

export interface RunningOrchestrator {
  readonly nodeId: string;
  readonly apiUrl: string;
  readonly natsUrl: string;
  readonly manager: NodeManager;
  readonly publisher: NatsEventPublisher;
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
// Its own steps are bounded (NATS drain, nats-server SIGKILL, store close); this is the backstop.
const SCOPE_CLOSE_TIMEOUT_MS = 15_000;

function storeDescription(config: ShoalConfig): string {
  return config["EventStore.URL"] !== "" ? `EventStoreDB at ${config["EventStore.URL"]}` : `SQLite store ${join(config.DataDir, "shoal.db")}`;
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
export async function startOrchestrator(config: ShoalConfig, logger: Logger, options: { clock?: Clock } = {}): Promise<RunningOrchestrator> {
  const clock = options.clock ?? systemClock;
  const scope = Effect.runSync(Scope.make());
  const built = await Effect.runPromiseExit(Layer.buildWithScope(Layer.merge(storeLayer(config, logger), natsLayer(config, logger)), scope));
  if (Exit.isFailure(built)) {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    const error = Cause.squash(built.cause);
    throw error instanceof StartupError ? error : new StartupError(String(error));
  }
  const storeHealth = new StoreHealth(Context.get(built.value, Store), storeDescription(config));
  const store = storeHealth.store;
  const { nc, url: natsUrl, server: natsServer } = Context.get(built.value, Nats);
  const transport = new TransportWatch(nc, natsUrl, natsServer, logger.child({ component: "transport" }));
  transport.start();
  // Every step is bounded: a wedged NATS or store must not keep `serve` from exiting (docs/security.md, Faults).
  const cleanups: Cleanup[] = [{ name: "closing NATS and the store", run: () => Effect.runPromise(Scope.close(scope, Exit.void)), timeoutMs: SCOPE_CLOSE_TIMEOUT_MS }];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const { name, run, hard, timeoutMs } of [...cleanups].reverse()) {
        await boundedStep(name, run, { timeoutMs: timeoutMs ?? STOP_STEP_TIMEOUT_MS, logger, ...(hard ? { hard } : {}) });
      }
    })());

  try {
    const nodeId = resolveNodeIdentity(config.NodeID, config.DataDir);
    const manager = new NodeManager({
      store,
      clock,
      logger: logger.child({ component: "node-manager" }),
      manualApproval: config["Orchestrator.NodeManager.ManualApproval"],
      thresholds: new HealthThresholds(
        { disconnectMs: config["Orchestrator.NodeManager.DisconnectTimeout"], unknownMs: config["Orchestrator.NodeManager.UnknownTimeout"] },
        config["Orchestrator.NodeManager.Overrides"],
      ),
    });
    cleanups.push({ name: "stopping the node manager", run: () => manager.stop() });
    transport.onChange((down) => (down === undefined ? manager.transportUp() : manager.transportDown(down)));
    cleanups.push({ name: "stopping the transport watch", run: () => transport.stop() });
    if (transport.down !== undefined) manager.transportDown(transport.down);
    const recovered = await manager.recover();
    const self = selfInfo(nodeId, config.Labels);
    const selfResult = await manager.registerSelf(self);

    const views = new NodeViews();
    const projection = new ProjectionRunner({ name: "node-views", store, logger: logger.child({ component: "projection" }), handle: views.handle });
    await projection.start();
    cleanups.push({ name: "stopping the node-views projection", run: () => projection.stop() });
    await projection.waitFor(Math.max(recovered.position, selfResult.position ?? 0), 120_000);

    const publisher = new NatsEventPublisher(nc, store, store, logger.child({ component: "event-publisher" }));
    await publisher.start();
    // Waits on JetStream acks: as bounded as a NATS drain.
    cleanups.push({ name: "stopping the event publisher", run: () => publisher.stop(), timeoutMs: NATS_DRAIN_TIMEOUT_MS });

    const protocol = new NodeProtocolHandler(nc, manager, { token: config["Orchestrator.Auth.Token"], logger: logger.child({ component: "protocol" }) });
    protocol.start();
    cleanups.push({ name: "stopping the compute protocol", run: () => protocol.stop(), timeoutMs: NATS_DRAIN_TIMEOUT_MS });

    const checks = [...transport.checks, storeHealth];
    const api = buildApi({ logger: logger.child({ component: "api" }), self, manager, views, projection, history: new NodeHistory(store), checks });
    try {
      await api.listen({ host: config["API.Host"], port: config["API.Port"] });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new StartupError(
        code === "EADDRINUSE" ? `API.Port ${config["API.Port"]} is already in use; choose another with -c API.Port=<port>` : `cannot start the API: ${(e as Error).message}`,
      );
    }
    cleanups.push({ name: "closing the API", run: () => api.close(), hard: () => api.server.closeAllConnections() });
    const address = api.server.address() as AddressInfo;
    const host = config["API.Host"] === "0.0.0.0" || config["API.Host"] === "::" ? "127.0.0.1" : config["API.Host"];
    const apiUrl = `http://${host}:${address.port}`;
    logger.info({ nodeId, api: apiUrl, nats: natsUrl }, "orchestrator ready");
    return { nodeId, apiUrl, natsUrl, manager, publisher, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
