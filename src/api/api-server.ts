import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { ShoalConfig } from "../config/keys.ts";
import type { NodeInfo } from "../events/catalog/node-info.ts";
import type { EventFeed } from "../projections/event-feed/event-feed.ts";
import { ShoalError } from "../errors/shoal-error.ts";
import { agentRoutes } from "./agent/agent-routes.ts";
import { legacyRedirectRoutes } from "./agent/legacy-redirect-routes.ts";
import { authMethodsRoutes } from "./auth/auth-methods-routes.ts";
import { Authenticator } from "./auth/authenticator.ts";
import { apiDocsRoute } from "./docs/api-docs-route.ts";
import { registerAuth, type ApiAuth } from "./auth/register-auth.ts";
import { whoamiRoute } from "./auth/whoami-route.ts";
import { handleClientError } from "./client-error.ts";
import { eventFeedRoutes } from "./events/event-feed-routes.ts";
import { eventStreamRoute, type EventStreamDeps } from "./events/event-stream-route.ts";
import { auditRoutes } from "./audit/audit-routes.ts";
import { auditDiffRoute, type AuditDiffDeps } from "./audit/audit-diff-route.ts";
import { auditMembershipRoute, type AuditMembershipDeps } from "./audit/audit-membership-route.ts";
import type { AuditLog } from "../events/chain/audit-log.ts";
import type { HealthCheck } from "./agent/health-check.ts";
import { sendError } from "./error-body.ts";
import { registerJsonBodyParser } from "./json-body.ts";
import type { JobLogs } from "./jobs/job-logs.ts";
import { jobLogsRoute } from "./jobs/job-logs-route.ts";
import type { JobResults } from "./jobs/job-results.ts";
import { jobResultsRoutes } from "./jobs/job-results-route.ts";
import { jobRoutes } from "./jobs/job-routes.ts";
import { jobVersionRoutes, type JobVersionRouteDeps } from "./jobs/job-version-routes.ts";
import { leafRoutes, type LeafLoginRevoker } from "./leaves/leaf-routes.ts";
import type { ShoalMetrics } from "../metrics/shoal-metrics.ts";
import { metricsRoutes, registerRequestMetrics } from "./metrics/metrics-routes.ts";
import { nodeRoutes, type NodeRouteDeps } from "./nodes/node-routes.ts";
import { openApiDocument, openApiRoute } from "./openapi.ts";
import { requestId } from "./request-id.ts";
import { registerRoutes, type AnyRoute } from "./route.ts";
import { registerUi } from "./ui/register-ui.ts";
import type { UiFiles } from "./ui/ui-files.ts";

export interface ApiDeps extends NodeRouteDeps {
  readonly logger: Logger;
  readonly self: NodeInfo;
  readonly auth: ApiAuth;
  /** The cluster's whole history, filtered (GET /events); without it there is no feed route. */
  readonly feed?: EventFeed;
  /** The same history live, as Server-Sent Events (GET /events/stream); without it there is no stream route. */
  readonly stream?: EventStreamDeps;
  /** The audit routes; `log` absent: the store keeps no chain, and they answer 501. */
  readonly audit?: { readonly log: AuditLog | undefined; readonly membership?: AuditMembershipDeps };
  /** GET /audit/diff: what changed between two moments; without it there is no diff route. */
  readonly auditDiff?: AuditDiffDeps;
  /** The effective configuration GET /agent/config shows, secrets redacted; without it there is no config route. */
  readonly config?: ShoalConfig;
  /** What /agent/alive and /agent/ready check (NATS, the store). */
  readonly checks?: readonly HealthCheck[];
  /** GET /metrics and request durations; without it there is no /metrics route. */
  readonly metrics?: ShoalMetrics;
  /** `shoal leaf revoke`'s route; only where Shoal runs the NATS operator. */
  readonly leaves?: LeafLoginRevoker;
  /** Jobs and executions (submit, stop, the read model, history); without it there are no job routes. */
  readonly jobs?: JobVersionRouteDeps;
  /** GET /jobs/{id}/logs (HTTP and WebSocket); without it there is no logs route. */
  readonly jobLogs?: JobLogs;
  /** GET /jobs/{id}/results and the download of each; without it there are no results routes. */
  readonly jobResults?: JobResults;
  /** HTTPS with this certificate chain and key; absent: plain HTTP (API.TLS.Disable). */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** The web console's built files, served at /ui; without them there is no console. */
  readonly ui?: UiFiles;
}

const BODY_LIMIT = 64 * 1024;
/** Node ids are up to 128 characters (NodeId); id prefixes and history paths fit too. Longer: 414. */
const MAX_PARAM_LENGTH = 256;

export function buildApi(deps: ApiDeps): FastifyInstance {
  // Typed as the HTTP instance: routes, hooks and the server's close calls are the same on HTTPS.
  const app = Fastify({
    ...(deps.tls ? { https: { cert: deps.tls.cert, key: deps.tls.key } } : {}),
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Not requestIdHeader: Fastify would take any X-Request-ID verbatim, however long.
    genReqId: requestId,
    logController: new LogController({ disableRequestLogging: true }),
    // Errors raised before a route is found (bad URL encoding, 414) and by Node's HTTP parser.
    frameworkErrors: (error, request, reply) => sendError(request, reply, error),
    clientErrorHandler: handleClientError,
  });
  registerJsonBodyParser(app);
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new ShoalError({ kind: "NotFound", message: `no route ${request.method} ${request.url}` }),
    ),
  );
  app.addHook("onResponse", async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      "request",
    );
  });
  // One authenticator: its bcrypt cache and cap are shared by every request and Bacalhau's login.
  const authenticator = new Authenticator(deps.auth.users);
  registerAuth(app, deps.auth, authenticator);
  if (deps.metrics) registerRequestMetrics(app, deps.metrics);
  const routes = apiRoutes(deps, authenticator);
  registerRoutes(app, routes);
  // Outside apiRoutes: the console's files are not part of the REST API, nor of its document.
  if (deps.ui) registerUi(app, deps.ui);
  return app;
}

/** Every route the API serves; the OpenAPI document describes these, itself included, but not the page of it. */
export function apiRoutes(deps: ApiDeps, authenticator = new Authenticator(deps.auth.users)): AnyRoute[] {
  let document: Record<string, unknown> = {};
  const routes: AnyRoute[] = [
    ...nodeRoutes(deps),
    ...(deps.feed ? eventFeedRoutes(deps.feed) : []),
    ...(deps.stream ? [eventStreamRoute(deps.stream)] : []),
    ...(deps.audit ? auditRoutes(deps.audit.log) : []),
    ...(deps.auditDiff ? [auditDiffRoute(deps.auditDiff)] : []),
    ...(deps.audit?.membership ? [auditMembershipRoute(deps.audit.membership)] : []),
    ...(deps.jobs ? [...jobRoutes(deps.jobs), ...jobVersionRoutes(deps.jobs)] : []),
    ...(deps.jobLogs ? [jobLogsRoute(deps.jobLogs)] : []),
    ...(deps.jobResults ? jobResultsRoutes(deps.jobResults) : []),
    ...agentRoutes(deps.self, deps.checks, deps.config),
    ...legacyRedirectRoutes(),
    whoamiRoute(deps.auth.anonymousAccess),
    ...authMethodsRoutes(authenticator),
    openApiRoute(() => document),
    apiDocsRoute(() => document),
    ...(deps.metrics ? metricsRoutes(deps.metrics) : []),
    ...(deps.leaves ? leafRoutes(deps.leaves) : []),
  ];
  document = openApiDocument(routes, deps.auth.anonymousAccess);
  return routes;
}
