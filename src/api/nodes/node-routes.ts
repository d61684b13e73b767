import { Schema } from "effect";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { commandContext } from "../../actors/command-context.ts";
import type { NodeManager } from "../../actors/node-manager.ts";
import { badRequest, notFound } from "../../errors/shoal-error.ts";
import type { NodeHistory } from "../../projections/node-history.ts";
import type { NodeIndex } from "../../projections/node-index/node-index.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { resolveNodeId } from "../../actors/resolve-node-id.ts";
import { operatorActor } from "../auth/principal.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { validate } from "../validate.ts";
import { ListNodesQuery, queryNodes } from "./node-query.ts";
import { toNodeState } from "./node-state.ts";
import { NodeStateJson } from "./node-state-json.ts";

export const PutNodeRequest = Schema.Struct({
  Action: Schema.Literal("approve", "reject", "delete").annotations({
    message: () => ({ message: 'must be one of "approve", "reject", "delete"', override: true }),
  }),
  Message: Schema.optional(Schema.String.pipe(Schema.maxLength(1024))),
  NodeID: Schema.optional(Schema.String),
});

export const HistoryQuery = Schema.Struct({
  limit: Schema.optional(DecimalInteger(1, 1000)),
  next_token: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{1,15}$/, { message: () => "next_token must be a token returned by this endpoint" }))),
});

const IdParams = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)) });

export interface NodeRouteDeps {
  readonly manager: NodeManager;
  readonly views: NodeViews;
  /** The views indexed for the list and for id-prefix look-ups (fed by the same projection). */
  readonly index: NodeIndex;
  readonly projection: ProcessorProgress;
  readonly history: NodeHistory;
}

/**
 * A node's ETag is weak, `W/"<revision>"`: its body also changes with heartbeats and resource
 * reports, which are not revisions. If-Match compares revisions, so it takes what GET returns.
 */
const etag = (revision: number) => `W/"${revision}"`;

/** `If-Match: W/"3"` (or "3", or 3) → 3; `*` or absent → no precondition. */
function ifMatch(request: FastifyRequest): number | undefined {
  const raw = request.headers["if-match"];
  if (raw === undefined || raw.trim() === "*") return undefined;
  const m = /^\s*(?:W\/)?"?(-?\d+)"?\s*$/.exec(raw);
  if (!m) throw badRequest(`If-Match must be an ETag returned by GET, like W/"3"; got ${raw}`);
  return Number(m[1]);
}

export function registerNodeRoutes(app: FastifyInstance, deps: NodeRouteDeps): void {
  const { manager, views, index, projection, history } = deps;
  const stateOf = (nodeId: string) => {
    const view = views.get(nodeId);
    if (!view || view.deleted) throw notFound(`node not found: ${nodeId}`);
    return toNodeState(view, manager.live(nodeId));
  };
  // Only the ids sharing the prefix are looked at: O(log N + matches), not a pass over the fleet.
  const resolveCurrent = (id: string) => resolveNodeId(id, index.idsWithPrefix(id));

  // Each node's JSON is kept with its view; a page splices in the live fields and joins the texts
  // (≈ 68 KB for 100 nodes) instead of building 100 NodeStates for Fastify to serialise.
  // The body is what returning the object would have sent (test/unit/projections/node-index.test.ts).
  const json = new NodeStateJson();
  app.get("/api/v1/orchestrator/nodes", async (request, reply) => {
    const query = validate(ListNodesQuery, request.query, "query");
    const page = queryNodes(index, query, (view) => view);
    // Bytes, or a string with a JSON content type, are sent as they are (Fastify serialises only objects).
    return reply.type("application/json; charset=utf-8").send(json.listBody(page.Nodes, (view) => manager.live(view.nodeId), page.NextToken));
  });

  app.get("/api/v1/orchestrator/nodes/:id", async (request, reply) => {
    const { id } = validate(IdParams, request.params, "path");
    const node = stateOf(resolveCurrent(id));
    void reply.header("ETag", etag(node.Revision));
    return { Node: node };
  });

  app.put("/api/v1/orchestrator/nodes/:id", async (request, reply) => {
    const { id } = validate(IdParams, request.params, "path");
    const body = validate(PutNodeRequest, request.body, "request body");
    // Bacalhau's body may name the node too; naming another one than the path is a mistake, not a choice.
    if (body.NodeID !== undefined && body.NodeID !== id && body.NodeID !== manager.resolve(id)) {
      throw badRequest(`the body names node ${body.NodeID} but the path names ${id}`);
    }
    const expectedRevision = ifMatch(request);
    const context = commandContext(
      operatorActor(request),
      { ...(body.Message === undefined ? {} : { reason: body.Message }), correlationId: String(request.id) },
    );
    const result = await manager.operatorAction(body.Action, id, context, expectedRevision);
    // Read-your-writes: the next GET must show what this PUT did.
    await projection.waitFor(result.position);
    void reply.header("ETag", etag(result.revision));
    return { Success: true };
  });

  app.get("/api/v1/orchestrator/nodes/:id/history", async (request) => {
    const { id } = validate(IdParams, request.params, "path");
    const query = validate(HistoryQuery, request.query, "query");
    const nodeId = resolveNodeId(id, index.everSeenWithPrefix(id));
    const page = await history.page(nodeId, query.next_token === undefined ? 0 : Number(query.next_token), query.limit ?? 100);
    return { Items: page.items, NextToken: page.next === undefined ? "" : String(page.next) };
  });
}
