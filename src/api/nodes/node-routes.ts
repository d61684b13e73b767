import { Schema } from "effect";
import type { FastifyRequest } from "fastify";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { NodeManager } from "../../actors/node-manager.ts";
import { badRequest, notFound } from "../../errors/shoal-error.ts";
import type { NodeHistory } from "../../projections/node-history.ts";
import type { NodeIndex } from "../../projections/node-index/node-index.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { resolveNodeId } from "../../actors/resolve-node-id.ts";
import type { ClusterAsOf } from "../../projections/as-of/cluster-as-of.ts";
import type { NodeView } from "../../projections/node-view.ts";
import {
  AS_OF_DESCRIPTIONS,
  AS_OF_FIELDS,
  AS_OF_POSITION_HEADER,
  asOfPosition,
  readAsOf,
} from "../as-of/as-of-query.ts";
import { operatorActor } from "../auth/principal.ts";
import type { CommandOutcome } from "../../cluster/owned-command.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { ClusterEventJson } from "../events/cluster-event-json.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { ListNodesQuery, queryNodes } from "./node-query.ts";
import { NodeStateResponse, toNodeState } from "./node-state.ts";
import { NodeStateJson } from "./node-state-json.ts";
import { PutNodeRequest, misplacedField } from "./update-node-command.ts";

export const HistoryQuery = Schema.Struct({
  limit: Schema.optional(DecimalInteger(1, 1000)),
  next_token: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^\d{1,15}$/, { message: () => "next_token must be a token returned by this endpoint" }),
    ),
  ),
});

export interface NodeRouteDeps {
  readonly manager: NodeManager;
  readonly views: NodeViews;
  /** The views indexed for the list and for id-prefix look-ups (fed by the same projection). */
  readonly index: NodeIndex;
  readonly projection: ProcessorProgress;
  readonly history: NodeHistory;
  /** The cluster as of a moment: `as_of` and `at_position` on the reads. */
  readonly asOf: ClusterAsOf;
  /** A PUT on the node's exact id, carried out by its partition's owner (updateNodeCommand). */
  readonly updateNode: (
    nodeId: string,
    body: typeof PutNodeRequest.Type,
    context: CommandContext,
    expectedRevision: number | undefined,
  ) => Promise<CommandOutcome>;
  /**
   * How many executions the orchestrator counts as under way on a node (the job read model's JobViews.byNode, which
   * the drain decides from): a draining node's Drain.ExecutionsLeft. Without it the field is left out.
   */
  readonly executionsUnderWay?: (nodeId: string) => number;
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

const IdParams = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)) });
/** What every route under /nodes/:id declares about its path. */
const BY_ID = { params: IdParams, describe: { id: "Node id or a unique prefix of one" } };
const LIST_DESCRIPTIONS = {
  limit: "Page size",
  next_token: "Cursor from the previous page's NextToken",
  order_by: "Sort field",
  reverse: "Reverse the order",
  "filter-approval": "PENDING, APPROVED or REJECTED (any case)",
  "filter-status": "HEALTHY, UNHEALTHY, UNKNOWN; CONNECTED = HEALTHY, DISCONNECTED = UNHEALTHY or UNKNOWN",
  labels:
    "Kubernetes label selector on the effective labels (the node's own overlaid by the operator's); may repeat (joined with commas)",
  "filter-cordoned": "true: only cordoned nodes; false: only schedulable ones",
};

export const ListNodesResponse = Schema.Struct({ Nodes: Schema.Array(NodeStateResponse), NextToken: Schema.String });
export const GetNodeResponse = Schema.Struct({ Node: NodeStateResponse });
/** Message: set when the action changed nothing (e.g. "node already cordoned"). */
export const PutNodeResponse = Schema.Struct({ Success: Schema.Boolean, Message: Schema.optional(Schema.String) });
export const NodeHistoryResponse = Schema.Struct({ Items: Schema.Array(ClusterEventJson), NextToken: Schema.String });

const ListQuery = Schema.Struct({ ...ListNodesQuery.fields, ...AS_OF_FIELDS });
const GetQuery = Schema.Struct(AS_OF_FIELDS);

export function nodeRoutes(deps: NodeRouteDeps): AnyRoute[] {
  const { manager, views, index, projection, history, asOf, updateNode, executionsUnderWay } = deps;
  const stateOf = (nodeId: string) => {
    const view = views.get(nodeId);
    if (!view || view.deleted) throw notFound(`node not found: ${nodeId}`);
    return toNodeState(view, manager.live(nodeId), executionsUnderWay?.(nodeId));
  };
  // As of a moment nothing is live: what a node reported between its events was never stored (docs/audit.md).
  const stateAsOf = (view: NodeView) => toNodeState(view, undefined);
  /** A node as of `position`: its own stream folded when its id is exact, else resolved as the list then did. */
  const nodeAsOf = async (cluster: ClusterAsOf, id: string, position: number) => {
    const own = await cluster.node(id, position);
    if (own && !own.deleted) return stateAsOf(own);
    return cluster.nodes.read(position, ({ views: past, index: pastIndex }) => {
      const view = past.get(resolveNodeId(id, pastIndex.idsWithPrefix(id)));
      if (!view || view.deleted) throw notFound(`node not found: ${id}`);
      return stateAsOf(view);
    });
  };
  // Only the ids sharing the prefix are looked at: O(log N + matches), not a pass over the fleet.
  const resolveCurrent = (id: string) => resolveNodeId(id, index.idsWithPrefix(id));

  // Each node's JSON is kept with its view; a page splices in the live fields and joins the texts
  // (≈ 68 KB for 100 nodes) instead of building 100 NodeStates for Fastify to serialise.
  // The body is what returning the object would have sent (test/unit/projections/node-index.test.ts).
  const json = new NodeStateJson();
  return [
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/nodes",
      operationId: "listNodes",
      tags: ["Nodes"],
      summary: "Returns a list of nodes.",
      description:
        "Nodes (compute nodes and the orchestrators), filtered by approval, status, cordon, drain and label " +
        "selector, ordered and paged as Bacalhau's list; with as_of or at_position, the list as it was at " +
        "that moment.",
      capability: "read:node",
      query: ListQuery,
      describe: { ...LIST_DESCRIPTIONS, ...AS_OF_DESCRIPTIONS },
      responses: { "200": { description: "Nodes", schema: ListNodesResponse } },
      errors: ["BadRequest"],
      handler: async ({ query }, _request, reply) => {
        const position = await asOfPosition(asOf, query);
        if (position !== undefined) {
          const past = await asOf.nodes.read(position, (model) => queryNodes(model.index, query, stateAsOf));
          void reply.header(AS_OF_POSITION_HEADER, String(position));
          return past;
        }
        const page = queryNodes(index, query, (view) => view);
        // Bytes, or a string with a JSON content type, are sent as they are (Fastify serialises only objects).
        return reply
          .type("application/json; charset=utf-8")
          .send(json.listBody(page.Nodes, (view) => manager.live(view.nodeId), page.NextToken, executionsUnderWay));
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/nodes/:id",
      operationId: "getNode",
      tags: ["Nodes"],
      summary: "Returns a node.",
      description:
        "One node by its id or a unique prefix of it, with its membership, health, cordon, drain, operator " +
        "labels and live capacities; with as_of or at_position, the node as it was then (without live " +
        "fields).",
      capability: "read:node",
      ...BY_ID,
      responses: {
        "200": {
          description:
            'The node; its weak ETag, W/"<revision>", carries its revision (heartbeats change the body, not the revision)',
          schema: GetNodeResponse,
        },
      },
      query: GetQuery,
      describe: { ...BY_ID.describe, ...AS_OF_DESCRIPTIONS },
      errors: ["BadRequest", "NotFound", "MultipleNodesFound"],
      handler: async ({ params, query }, _request, reply) => {
        const position = await asOfPosition(asOf, query);
        if (position !== undefined) {
          const past = await readAsOf(position, () => nodeAsOf(asOf, params.id, position));
          // No ETag: a revision of the past is no precondition for a write now.
          void reply.header(AS_OF_POSITION_HEADER, String(position));
          return { Node: past };
        }
        const node = stateOf(resolveCurrent(params.id));
        void reply.header("ETag", etag(node.Revision));
        return { Node: node };
      },
    }),
    defineRoute({
      method: "PUT",
      path: "/api/v1/orchestrator/nodes/:id",
      operationId: "updateNode",
      tags: ["Nodes"],
      summary: "Acts on a node: approve, reject, delete, cordon, drain, label, pre-authorise.",
      description:
        "Bacalhau's PutNodeRequest with Shoal's actions besides approve, reject and delete. Message is the " +
        "reason, recorded in the node's history with the authenticated caller. If-Match makes the action " +
        "conditional on the node's revision (412 when it changed).",
      capability: "write:node",
      ...BY_ID,
      body: PutNodeRequest,
      bodyComponent: "PutNodeRequest",
      headers: [{ name: "If-Match", description: 'ETag from GET (W/"<revision>"); 412 if the node has changed' }],
      responses: { "200": { description: "Done", schema: PutNodeResponse } },
      errors: [
        "BadRequest",
        "NotFound",
        "Conflict",
        "MultipleNodesFound",
        "PreconditionFailed",
        "PayloadTooLarge",
        "UnsupportedMediaType",
        "Unavailable",
      ],
      handler: async ({ params: { id }, body }, request, reply) => {
        const misplaced = misplacedField(body);
        if (misplaced !== undefined) throw badRequest(misplaced);
        // A pre-authorisation names a node that need not exist yet: its exact id, never a prefix.
        const exact = body.Action === "preauthorize" || body.Action === "revoke-preauthorization";
        // Bacalhau's body may name the node too; naming another one than the path is a mistake, not a choice.
        if (body.NodeID !== undefined && body.NodeID !== id && (exact || body.NodeID !== manager.resolve(id))) {
          throw badRequest(`the body names node ${body.NodeID} but the path names ${id}`);
        }
        const expectedRevision = ifMatch(request);
        const context = commandContext(operatorActor(request), {
          ...(body.Message === undefined ? {} : { reason: body.Message }),
          correlationId: String(request.id),
        });
        // The node's partition is found from its exact id; its owner may be another orchestrator.
        const nodeId = exact ? id : manager.resolve(id);
        const result = await updateNode(nodeId, body, context, expectedRevision);
        // Read-your-writes: the next GET here must show what this PUT did, wherever it was carried out.
        await projection.waitFor(result.position);
        if (result.revision !== undefined) void reply.header("ETag", etag(result.revision));
        return !result.changed && result.note !== undefined
          ? { Success: true, Message: result.note }
          : { Success: true };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/nodes/:id/history",
      operationId: "nodeHistory",
      tags: ["Nodes", "Audit"],
      summary: "Returns the history of a node.",
      description:
        "Every stored event of the node, oldest first, with who caused it and why; a deleted node's history " +
        "stays. Needs read:history, never granted to anonymous callers.",
      capability: "read:history",
      ...BY_ID,
      query: HistoryQuery,
      responses: { "200": { description: "Every event of the node, oldest first", schema: NodeHistoryResponse } },
      errors: ["BadRequest", "NotFound", "MultipleNodesFound"],
      handler: async ({ params: { id }, query }) => {
        const seen = index.everSeenWithPrefix(id);
        const from = query.next_token === undefined ? 0 : Number(query.next_token);
        const limit = query.limit ?? 100;
        if (seen.length === 0) {
          // A node only pre-authorised has no view (nor a place in a node-state snapshot): its exact id still shows its
          // stream.
          const page = await history.page(id, from, limit);
          if (page.items.length === 0 && from === 0) resolveNodeId(id, seen);
          return { Items: page.items, NextToken: page.next === undefined ? "" : String(page.next) };
        }
        const page = await history.page(resolveNodeId(id, seen), from, limit);
        return { Items: page.items, NextToken: page.next === undefined ? "" : String(page.next) };
      },
    }),
  ];
}
