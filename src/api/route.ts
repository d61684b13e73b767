import type { Schema } from "effect";
import fastifyWebsocket from "@fastify/websocket";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import type { ErrorKind } from "../errors/shoal-error.ts";
import type { ApiTag } from "./api-tags.ts";
import type { RequiredCapability } from "./auth/capabilities.ts";
import { routeAccess } from "./auth/route-access.ts";
import { goBodyKeys } from "./go-body-keys.ts";
import { validate } from "./validate.ts";

export type RouteMethod = "GET" | "PUT" | "POST" | "DELETE";

/** A response the route can send with a 2xx status. */
export interface RouteResponse {
  readonly description: string;
  /** The body's shape; none for a body that is not described (the document itself). */
  readonly schema?: Schema.Schema.Any;
  /** `application/json` unless said otherwise (/metrics is Prometheus text). */
  readonly contentType?: string;
  /** Other content types the same status answers with when the caller's Accept asks for them, with their schemas. */
  readonly variants?: Readonly<Record<string, Schema.Schema.Any>>;
}

/** A request header the route reads (documented; the handler parses it). */
export interface RouteHeader {
  readonly name: string;
  readonly description: string;
}

type Decoded<S> = S extends Schema.Schema<infer A, infer _I, infer _R> ? A : undefined;

export interface RouteInput<P, Q, B> {
  readonly params: Decoded<P>;
  readonly query: Decoded<Q>;
  readonly body: Decoded<B>;
}

/**
 * One REST route: what the server registers and what the OpenAPI document says about it, in one
 * place. params, query and body are the schemas the request is validated with before the handler
 * runs, so the document cannot describe other rules than those enforced.
 */
export interface Route<P = unknown, Q = unknown, B = unknown> {
  readonly method: RouteMethod;
  /** Fastify's pattern (`/api/v1/orchestrator/nodes/:id`); the document writes `{id}`. */
  readonly path: string;
  readonly operationId: string;
  /** The groups it is listed under (api-tags.ts), the first one where the docs page shows it. */
  readonly tags: readonly [ApiTag, ...ApiTag[]];
  /** One line, in the style of Bacalhau's swagger ("Returns a list of jobs."). */
  readonly summary: string;
  /** What a caller needs to know beyond the summary: rules, limits, what the answer holds. */
  readonly description: string;
  /** Served, but not an operation of the OpenAPI document: the page that renders the document. */
  readonly undocumented?: true;
  /**
   * What a caller needs. route-access.ts is the table the server enforces (and that future
   * routes fall into by prefix); registering a route that declares otherwise fails at start.
   */
  readonly capability: RequiredCapability | "public";
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /**
   * The name the document gives the body's schema among its components. Not an identifier
   * annotation on the schema itself: that would change the validation errors' wording.
   */
  readonly bodyComponent?: string;
  /** Descriptions of path and query parameters, by name (documentation only, not validation). */
  readonly describe?: Readonly<Record<string, string>>;
  readonly headers?: readonly RouteHeader[];
  /** Responses by status (`"200"`). */
  readonly responses: Readonly<Record<string, RouteResponse>>;
  /** The errors it can answer besides 401/403, as kinds: error-status.ts turns them into statuses. */
  readonly errors?: readonly ErrorKind[];
  readonly handler: (input: RouteInput<P, Q, B>, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /**
   * Also a WebSocket at the same path, for a GET with `Upgrade: websocket`. Called after the auth
   * hooks and validation but before the upgrade, so that what it throws is a plain HTTP error
   * (401, 400, 404); what it returns runs on the upgraded socket.
   */
  readonly websocket?: (input: RouteInput<P, Q, B>, request: FastifyRequest) => (socket: WebSocket) => Promise<void>;
}

/** Keeps the schemas' types for the handler's input. */
export function defineRoute<
  P extends Schema.Schema.Any | undefined = undefined,
  Q extends Schema.Schema.Any | undefined = undefined,
  B extends Schema.Schema.Any | undefined = undefined,
>(route: Route<P, Q, B>): Route<P, Q, B> {
  return route;
}

// Each route's own type parameters are erased once it is in a list.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = Route<any, any, any>;

/** Throws when a route's declared capability is not what route-access.ts enforces for it. */
export function checkAccess(route: AnyRoute): void {
  const access = routeAccess(route.method, route.path);
  const enforced = access.public ? "public" : access.capability;
  if (enforced !== route.capability) {
    throw new Error(
      `${route.method} ${route.path} declares ${route.capability} but route-access.ts enforces ${enforced}`,
    );
  }
}

function inputOf(route: AnyRoute, request: FastifyRequest): RouteInput<unknown, unknown, unknown> {
  const schemas = route as Route<
    Schema.Schema.Any | undefined,
    Schema.Schema.Any | undefined,
    Schema.Schema.Any | undefined
  >;
  return {
    params:
      schemas.params === undefined
        ? undefined
        : validate(schemas.params as Schema.Schema<unknown, unknown>, request.params, "path"),
    query:
      schemas.query === undefined
        ? undefined
        : validate(schemas.query as Schema.Schema<unknown, unknown>, request.query, "query"),
    body:
      schemas.body === undefined
        ? undefined
        : validate(
            schemas.body as Schema.Schema<unknown, unknown>,
            goBodyKeys(schemas.body, request.body),
            "request body",
          ),
  } as RouteInput<unknown, unknown, unknown>;
}

/**
 * Registers each route, validating path, query and body (in that order) before its handler runs; the body's field
 * names matched first as Bacalhau's server matches them (go-body-keys.ts).
 */
export function registerRoutes(app: FastifyInstance, routes: readonly AnyRoute[]): void {
  for (const route of routes) {
    checkAccess(route);
    if (route.websocket) {
      registerWebSocketRoute(app, route);
      continue;
    }
    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => route.handler(inputOf(route, request), request, reply),
    });
  }
}

/**
 * A route that is also a WebSocket: @fastify/websocket upgrades inside the route's handler, after
 * the hooks, so auth and validation (a preHandler here) answer plain HTTP errors. Its routes must
 * be declared in a plugin registered after it; avvio loads them in order.
 */
const withWebSockets = new WeakSet<FastifyInstance>();

function registerWebSocketRoute(app: FastifyInstance, route: AnyRoute): void {
  const pending = new WeakMap<
    FastifyRequest,
    { input: RouteInput<unknown, unknown, unknown>; session?: (socket: WebSocket) => Promise<void> }
  >();
  if (!withWebSockets.has(app)) {
    withWebSockets.add(app);
    void app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 } });
  }
  void app.register(async (scope) => {
    scope.route({
      method: route.method,
      url: route.path,
      // wsHandler, not `websocket: true`: that makes the HTTP side a 404.
      preHandler: async (request) => {
        const input = inputOf(route, request);
        pending.set(request, request.ws ? { input, session: route.websocket!(input, request) } : { input });
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) =>
        route.handler(pending.get(request)!.input, request, reply),
      wsHandler: async (socket: WebSocket, request: FastifyRequest) => pending.get(request)!.session!(socket),
    });
  });
}
