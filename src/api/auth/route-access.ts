import type { RequiredCapability } from "./capabilities.ts";

/** How a route is guarded: open to all, or a capability, possibly granted to anonymous callers. */
export type RouteAccess =
  | {
      readonly public: true;
      /** Credentials sent are still checked (401 when wrong) and name the caller; none: anonymous. */
      readonly identifies?: true;
    }
  | { readonly public: false; readonly capability: RequiredCapability; readonly anonymousRead: boolean };

/** Bacalhau's login methods and Shoal's one method, `api-key` (auth-methods-routes.ts). */
export const AUTH_METHODS_ROUTE = "/api/v1/auth";
export const API_KEY_METHOD_ROUTE = `${AUTH_METHODS_ROUTE}/api-key`;

/**
 * The old paths Bacalhau's server still redirects (301, GET only: pkg/publicapi/server.go, registerRedirects) to
 * their routes, which check their callers as always. Not in Bacalhau's swagger, nor in Shoal's document.
 */
export const LEGACY_REDIRECTS: Readonly<Record<string, string>> = {
  "/": "/api/v1/agent/version",
  "/version": "/api/v1/agent/version",
  "/livez": "/api/v1/agent/alive",
};

/**
 * Open without credentials, as in Bacalhau (alive and version are what probes and version
 * checks call, the login methods what its CLI asks before it holds a credential); the API's own
 * description is public too. Credentials sent here are ignored.
 */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  "/api/v1/agent/alive",
  "/api/v1/agent/version",
  "/api/v1/openapi.json",
  "/api/v1/docs",
  AUTH_METHODS_ROUTE,
  API_KEY_METHOD_ROUTE,
  ...Object.keys(LEGACY_REDIRECTS),
]);

/**
 * Who the caller is and what they may do: public, so that the console can ask before and without signing in, but
 * credentials sent are checked, so wrong ones are a 401 here too.
 */
export const WHOAMI_ROUTE = "/api/v1/orchestrator/whoami";

/** The web console's files (register-ui.ts): public, as a page is; the data comes from the API with its own checks. */
const isConsoleFile = (route: string): boolean => route === "/ui" || route.startsWith("/ui/");

/** The audit record names operators, so it is its own capability and never anonymous. */
export const HISTORY_ROUTE = "/api/v1/orchestrator/nodes/:id/history";
/** The whole history of the cluster: the same audit record, so the same capability. */
export const EVENT_FEED_ROUTE = "/api/v1/orchestrator/events";
/** The same history as it is stored, as Server-Sent Events. */
export const EVENT_STREAM_ROUTE = "/api/v1/orchestrator/events/stream";

/** The hash chain hands over the same rows as the feed, with their links. */
export const AUDIT_ROUTES = [
  "/api/v1/orchestrator/audit/genesis",
  "/api/v1/orchestrator/audit/chain",
  "/api/v1/orchestrator/audit/checkpoints",
  "/api/v1/orchestrator/audit/diff",
  "/api/v1/orchestrator/audit/membership",
] as const;

/**
 * Operational figures of the orchestrator itself, for a scraper with an API key: never
 * anonymous (they show when it is loaded or stalled, and no WebUI needs them).
 */
export const METRICS_ROUTE = "/metrics";
/** The orchestrator's configuration, secrets redacted: still how it is set up (paths, users and their capabilities). */
export const AGENT_CONFIG_ROUTE = "/api/v1/agent/config";

// Bacalhau's endpoint → resource map (longest prefix wins).
const RESOURCES: readonly (readonly [string, "node" | "job" | "agent"])[] = [
  ["/api/v1/orchestrator/nodes", "node"],
  ["/api/v1/orchestrator/jobs", "job"],
  ["/api/v1/agent", "agent"],
];

const READ_METHODS = new Set(["GET", "HEAD"]);

/** What an anonymous caller may do under `API.Auth.AnonymousAccess: read`: read the resources (not the history). */
export const ANONYMOUS_READS: readonly RequiredCapability[] = RESOURCES.map(
  ([, resource]) => `read:${resource}` as const,
);

/** Routes whose reads need a capability of their own, never granted to anonymous readers. */
const OWN_READ_CAPABILITY: ReadonlyMap<string, RequiredCapability> = new Map([
  [HISTORY_ROUTE, "read:history"],
  [EVENT_FEED_ROUTE, "read:history"],
  [EVENT_STREAM_ROUTE, "read:history"],
  ...AUDIT_ROUTES.map((route) => [route, "read:history"] as const),
  [METRICS_ROUTE, "read:agent"],
  [AGENT_CONFIG_ROUTE, "read:agent"],
]);

/**
 * The access a route needs, from its Fastify pattern (`/api/v1/orchestrator/nodes/:id`), never
 * from the raw URL, so encoding tricks cannot move a request to a laxer rule. GET and HEAD read;
 * every other method writes. A route outside the map needs `write:node`, Bacalhau's safe default.
 */
export function routeAccess(method: string, route: string): RouteAccess {
  if (PUBLIC_ROUTES.has(route) || isConsoleFile(route)) return { public: true };
  if (route === WHOAMI_ROUTE) return { public: true, identifies: true };
  const read = READ_METHODS.has(method.toUpperCase());
  const own = OWN_READ_CAPABILITY.get(route);
  if (own !== undefined) return { public: false, capability: read ? own : "write:node", anonymousRead: false };
  const resource = RESOURCES.find(([prefix]) => route === prefix || route.startsWith(`${prefix}/`))?.[1];
  if (resource === undefined) return { public: false, capability: "write:node", anonymousRead: false };
  return { public: false, capability: `${read ? "read" : "write"}:${resource}`, anonymousRead: read };
}
