import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { reachableHost, urlHost } from "../../net/reachable-host.ts";
import { buildApi } from "../../api/api-server.ts";
import { loadUiFiles, uiDirectory } from "../../api/ui/ui-files.ts";
import { rerunJobCommand } from "../../api/jobs/rerun-job-command.ts";
import { stopJobCommand } from "../../api/jobs/stop-job-command.ts";
import { updateNodeCommand } from "../../api/nodes/update-node-command.ts";
import { apiListenAddresses, listenApi } from "../../api/listen-api.ts";
import { ClusterAsOf } from "../../projections/as-of/cluster-as-of.ts";
import { auditLogOf } from "../../events/chain/audit-log.ts";
import { AuditDiff } from "../../projections/audit-diff/audit-diff.ts";
import { EventFeed } from "../../projections/event-feed/event-feed.ts";
import { MembershipAudit } from "../../projections/audit-membership/membership-audit.ts";
import { JobHistory } from "../../projections/jobs/job-history.ts";
import { NodeHistory } from "../../projections/node-history.ts";
import { resolveApiAuth } from "../api-auth.ts";
import { resolveApiTls } from "../api-tls.ts";
import { leafLoginRevoker } from "../leaf-login-revoker.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import { StartupError } from "../services.ts";
import { wireMetrics } from "../wire-metrics.ts";
import type { ClusterModule } from "./cluster-module.ts";
import type { EventPublisherModule } from "./event-publisher-module.ts";
import type { EventStreamModule } from "./event-stream-module.ts";
import type { JobModule } from "./job-module.ts";
import type { NodeModule } from "./node-module.ts";

export interface ApiModule extends Module {
  /** The generated admin API key's file, when API.Auth.Users is empty. */
  readonly adminKey: { readonly path: string; readonly created: boolean } | undefined;
  /** The generated CA clients trust, when the API serves HTTPS with a generated certificate. */
  readonly caFile: string | undefined;
  /** Where the API listens (serve on). */
  readonly url: Later<string>;
  /** Serves the certificate files again, as they are now (SIGHUP); false: the API serves plain HTTP. */
  reloadTls(): boolean;
}

/** How often a generated certificate is checked for renewal (it is renewed 30 days before its end). */
const TLS_RENEWAL_CHECK_MS = 24 * 60 * 60 * 1000;

/** The REST API (and /metrics), served last: nothing is served before every read model caught up. */
export function apiModule(
  context: OrchestratorContext,
  offers: {
    readonly nodes: NodeModule;
    readonly jobs: JobModule;
    readonly publisher: EventPublisherModule;
    readonly streams: EventStreamModule;
    readonly cluster: ClusterModule;
  },
): ApiModule {
  const { config, store, logger, metrics, processors, stops, transport, storeHealth } = context;
  const { nodes, jobs, publisher, streams } = offers;
  const { commands } = offers.cluster;
  // At build: a bad API.Auth stops start-up before anything is recovered.
  const { auth, adminKey } = resolveApiAuth(config, logger.child({ component: "api" }));
  const tls = resolveApiTls(config, logger.child({ component: "api" }), () => new Date(context.clock.now()));
  const url = new Later<string>("the API's URL", "serve");
  const server = new Later<HttpsServer>("the API's HTTPS server", "serve");
  return {
    name: "api",
    adminKey,
    caFile: tls.caPath,
    url,

    reloadTls() {
      const material = tls.reload();
      if (material === undefined) return false;
      // Connections already open keep their session; new ones get the new certificate.
      server.get().setSecureContext(material);
      return true;
    },

    async serve() {
      metrics.observeHead(nodes.startPosition.get());
      wireMetrics(metrics, { manager: nodes.manager, index: nodes.index, processors: processors.processors });
      const access = context.nats.access;
      const leaves = access ? leafLoginRevoker(access) : undefined;
      const jobLogs = jobs.logs.get();
      const asOf = new ClusterAsOf({
        store,
        clock: context.clock,
        logger: logger.child({ component: "as-of" }),
        nodeSeed: (position) => nodes.seeds.load(position, store),
        cached: config["Orchestrator.Audit.AsOf.KeptStates"],
        keepFor: {
          ms: config["Orchestrator.Audit.AsOf.KeepFor"],
          deadlines: { set: (key, at, fire) => context.deadlines.set(key, at, fire) },
        },
      });
      // REST writes are carried out by their entity's owner; this orchestrator answers those it owns for the others.
      const updateNode = updateNodeCommand(nodes.manager);
      const stopJob = stopJobCommand(jobs.control);
      const rerunJob = rerunJobCommand(jobs.control);
      commands.register(updateNode);
      commands.register(stopJob);
      commands.register(rerunJob);
      await commands.answer();
      // Waits (within the step's bound) for forwarded writes under way: they append under leases handed back later.
      stops.add({ name: "no longer answering forwarded writes", run: () => commands.stop() });
      const uiDir = uiDirectory();
      const ui = loadUiFiles(uiDir);
      if (ui === undefined) logger.warn(`no web console at /ui: ${uiDir} has no build (npm run build)`);
      const api = buildApi({
        logger: logger.child({ component: "api" }),
        self: nodes.self,
        manager: nodes.manager,
        views: nodes.views,
        index: nodes.index,
        projection: nodes.lane.get(),
        history: new NodeHistory(store),
        asOf,
        updateNode: (nodeId, body, command, expected) => commands.run(updateNode, nodeId, body, command, expected),
        executionsUnderWay: (nodeId) => jobs.views.byNode.underWayCount(nodeId),
        feed: new EventFeed(store),
        stream: {
          hub: streams.hub.get(),
          store,
          deadlines: context.deadlines,
          clock: context.clock,
          logger: logger.child({ component: "event-stream" }),
          clientBufferBytes: config["API.EventStream.ClientBufferBytes"],
          maxClients: config["API.EventStream.MaxClients"],
          onCutOff: () => metrics.eventStreamCutOff(),
        },
        audit: {
          log: auditLogOf(store),
          membership: {
            audit: new MembershipAudit(store),
            clock: context.clock,
            resolve: (id) => nodes.manager.resolve(id, true),
          },
        },
        auditDiff: { diff: new AuditDiff(store), asOf },
        jobs: {
          control: jobs.control,
          views: jobs.views,
          projection: jobs.lane.get(),
          history: new JobHistory(store),
          asOf,
          stop: (jobId, reason, command) => commands.run(stopJob, jobId, { Reason: reason }, command, undefined),
          rerun: (jobId, version, reason, command) =>
            commands.run(rerunJob, jobId, { JobVersion: version, Reason: reason }, command, undefined),
        },
        jobLogs,
        jobResults: jobs.results.get(),
        auth,
        checks: [...transport.checks, publisher.jetStream.get(), storeHealth],
        config,
        metrics,
        ...(leaves ? { leaves } : {}),
        ...(tls.material ? { tls: tls.material } : {}),
        ...(ui ? { ui } : {}),
      });
      try {
        await listenApi(api, config["API.Port"], apiListenAddresses(config["API.Host"]));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        throw new StartupError(
          code === "EADDRINUSE"
            ? `API.Port ${config["API.Port"]} is already in use; choose another with -c API.Port=<port>`
            : `cannot start the API: ${(e as Error).message}`,
        );
      }
      stops.add({ name: "closing the API", run: () => api.close(), hard: () => api.server.closeAllConnections() });
      if (tls.material) {
        const stopRenewal = context.deadlines.every("api:tls-renewal", TLS_RENEWAL_CHECK_MS, () => {
          try {
            const renewed = tls.renewIfDue();
            if (renewed) server.get().setSecureContext(renewed);
          } catch (e) {
            logger.error(
              { err: (e as Error).message },
              "the API's certificate could not be renewed; the old one stays",
            );
          }
        });
        stops.add({ name: "ending the API certificate's renewal checks", run: () => stopRenewal() });
      }
      // Before the API closes (stop steps run last first): log streams end with an error instead of holding the close.
      stops.add({ name: "ending the job log streams", run: () => jobLogs.stop() });
      // Each client is told where to resume; the store holds every position, so it misses nothing after a restart.
      stops.add({
        name: "ending the event streams",
        run: () => streams.hub.get().close("the orchestrator is stopping"),
      });
      const address = api.server.address() as AddressInfo;
      const host = urlHost(reachableHost(config["API.Host"]));
      if (tls.material) server.set(api.server as unknown as HttpsServer);
      url.set(`${tls.material ? "https" : "http"}://${host}:${address.port}`);
    },
  };
}
