import { hostname, arch, platform } from "node:os";
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
import { buildVersion } from "../version.ts";
import { resolveNodeIdentity } from "./node-identity.ts";
import { Nats, StartupError, Store, natsLayer, storeLayer } from "./services.ts";

export interface RunningOrchestrator {
  readonly nodeId: string;
  readonly apiUrl: string;
  readonly natsUrl: string;
  readonly manager: NodeManager;
  readonly publisher: NatsEventPublisher;
  stop(): Promise<void>;
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
  const store = Context.get(built.value, Store);
  const { nc, url: natsUrl } = Context.get(built.value, Nats);
  const cleanups: (() => Promise<void> | void)[] = [() => Effect.runPromise(Scope.close(scope, Exit.void))];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (err) {
        logger.error({ err }, "error while stopping");
      }
    }
  };

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
      registrationLimits: {
        maxRegistrationsPerSecond: config["Orchestrator.NodeManager.MaxRegistrationsPerSecond"],
        registrationBurst: config["Orchestrator.NodeManager.RegistrationBurst"],
        maxPendingNodes: config["Orchestrator.NodeManager.MaxPendingNodes"],
      },
    });
    cleanups.push(() => manager.stop());
    const recovered = await manager.recover();
    const self = selfInfo(nodeId, config.Labels);
    const selfResult = await manager.registerSelf(self);

    const views = new NodeViews();
    const projection = new ProjectionRunner({ name: "node-views", store, logger: logger.child({ component: "projection" }), handle: views.handle });
    await projection.start();
    cleanups.push(() => projection.stop());
    await projection.waitFor(Math.max(recovered.position, selfResult.position ?? 0), 120_000);

    const publisher = new NatsEventPublisher(nc, store, store, logger.child({ component: "event-publisher" }));
    await publisher.start();
    cleanups.push(() => publisher.stop());

    const protocol = new NodeProtocolHandler(nc, manager, { token: config["Orchestrator.Auth.Token"], logger: logger.child({ component: "protocol" }) });
    protocol.start();
    cleanups.push(() => protocol.stop());

    const api = buildApi({ logger: logger.child({ component: "api" }), self, manager, views, projection, history: new NodeHistory(store) });
    try {
      await api.listen({ host: config["API.Host"], port: config["API.Port"] });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new StartupError(
        code === "EADDRINUSE" ? `API.Port ${config["API.Port"]} is already in use; choose another with -c API.Port=<port>` : `cannot start the API: ${(e as Error).message}`,
      );
    }
    cleanups.push(() => api.close());
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
