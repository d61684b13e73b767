import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import type { JobControl } from "../actors/job-control.ts";
import type { NodeManager } from "../actors/node-manager.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { lockDataDir } from "../fs/data-dir-lock.ts";
import { StopSteps } from "../lifecycle/stop-steps.ts";
import type { ProcessorProgress } from "../projections/processor.ts";
import { redactUrl } from "../security/redact-url.ts";
import { NATS_DRAIN_TIMEOUT_MS } from "../transport/close-nats-connection.ts";
import type { ModulePhase } from "./module.ts";
import { type OrchestratorModules, orchestratorModules } from "./modules.ts";
import type { JoinToken } from "./nats-credentials.ts";
import { resolveNodeIdentity } from "./node-identity.ts";
import { type OrchestratorContext, openContext } from "./orchestrator-context.ts";
import { type StartUpPhase, runModuleSteps, startInPhases } from "./start-up-phases.ts";

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
  /** The generated CA that signed the API's certificate (clients trust it); absent with API.TLS.CertFile or Disable. */
  readonly apiCaFile?: string;
  /** Serves the API's certificate as its files are now (replaced, or renewed); false: the API serves plain HTTP. */
  reloadApiTls(): boolean;
  /** The generated CA that signed the embedded nats-server's certificate (the same as the API's). */
  readonly natsCaFile?: string;
  /** Has the embedded nats-server serve its certificate files as they are now; false: no TLS of its own to reload. */
  reloadNatsTls(): boolean;
  stop(): Promise<void>;
}

/**
 * The composition root of `shoal serve`: opens the store and NATS, builds the modules (src/orchestrator/modules.ts)
 * and runs their start-up phases in order (docs/operations.md, Start-up). Nothing is served before every read model
 * has caught up with the store.
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
  const stops = new StopSteps(logger);
  // Last of all: the DataDir is free for another orchestrator only once this one has let go of it.
  stops.add({ name: "releasing the DataDir lock", run: () => lock.release() });
  let context: OrchestratorContext | undefined;
  let modules: OrchestratorModules | undefined;
  const opened = () => {
    if (context === undefined || modules === undefined) throw new Error("a start-up phase ran before open");
    return { context, modules };
  };
  const steps = (phase: ModulePhase) => () => runModuleSteps(opened().modules.list, phase, logger);
  const phases: StartUpPhase[] = [
    {
      name: "open",
      run: async () => {
        context = await openContext(config, logger, stops, {
          nodeId,
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.takeExecutionReports === undefined ? {} : { takeExecutionReports: options.takeExecutionReports }),
        });
        modules = orchestratorModules(context);
      },
    },
    { name: "recover", run: steps("recover") },
    {
      name: "follow",
      run: async () => {
        await steps("follow")();
        const { context, modules } = opened();
        // After the processors stopped (stop steps run last added first): the read models' final state.
        for (const { snapshot } of modules.list)
          if (snapshot) stops.add({ name: `writing the ${snapshot.name} snapshot`, run: snapshot.write });
        await context.processors.start();
        // Waits on JetStream acks: as bounded as a NATS drain.
        stops.add({
          name: "stopping the event processors",
          run: () => context.processors.stop(),
          timeoutMs: NATS_DRAIN_TIMEOUT_MS,
        });
      },
    },
    { name: "catch up", run: steps("catch up") },
    { name: "arm", run: steps("arm") },
    {
      name: "listen",
      run: async () => {
        await steps("listen")();
        const { context } = opened();
        // Nodes' heartbeats and answers are heard from here (the server holds the subscriptions): the reconnect grace
        // and each execution's answer bound count from now (a restart: the full bound).
        await context.nats.nc.flush();
        context.listening.begin();
      },
    },
    { name: "serve", run: steps("serve") },
  ];
  await startInPhases(phases, { logger, stops });
  const { context: ready, modules: built } = opened();
  const { nats } = ready;
  const apiUrl = built.api.url.get();
  logger.info({ nodeId, api: apiUrl, nats: redactUrl(nats.url) }, "orchestrator ready");
  return {
    nodeId,
    apiUrl,
    natsUrl: nats.url,
    manager: built.nodes.manager,
    jobs: built.jobs.control,
    publisher: built.publisher.lane.get(),
    joinToken: nats.joinToken,
    eventsReader: nats.readerCredsFile === undefined ? undefined : { credsFile: nats.readerCredsFile },
    ...(built.api.adminKey ? { adminKey: built.api.adminKey } : {}),
    ...(built.api.caFile === undefined ? {} : { apiCaFile: built.api.caFile }),
    reloadApiTls: () => built.api.reloadTls(),
    ...(nats.caPath === undefined ? {} : { natsCaFile: nats.caPath }),
    reloadNatsTls: () => nats.reloadTls?.() ?? false,
    stop: () => stops.stop(),
  };
}
