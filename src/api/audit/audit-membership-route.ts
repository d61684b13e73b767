import { Schema } from "effect";
import type { Clock } from "../../actors/clock.ts";
import { badRequest, ShoalError } from "../../errors/shoal-error.ts";
import type { MembershipAudit } from "../../projections/audit-membership/membership-audit.ts";
import type { NodeMembershipAudit } from "../../projections/audit-membership/membership-ledger.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { parseRfc3339 } from "../events/rfc3339-time.ts";
import { defineRoute, type AnyRoute } from "../route.ts";

export const AUDIT_MEMBERSHIP_PATH = "/api/v1/orchestrator/audit/membership";
export const MAX_MEMBERSHIP_NODES = 100;
export const MAX_MEMBERSHIP_PAGE = 1000;
export const DEFAULT_MEMBERSHIP_PAGE = 100;

const Time = Schema.optional(Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } }));
export const AuditMembershipQuery = Schema.Struct({
  since: Time,
  until: Time,
  node: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  limit: Schema.optional(DecimalInteger(1, MAX_MEMBERSHIP_PAGE)),
  next_token: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256))),
});

const Membership = Schema.Literal("PENDING", "APPROVED", "REJECTED", "DELETED");
export const MembershipChangeJson = Schema.Struct({
  Time: Schema.String,
  Event: Schema.String,
  Membership,
  By: Schema.String,
  Reason: Schema.String,
});
export const NodeMembershipJson = Schema.Struct({
  NodeID: Schema.String,
  Joined: Schema.NullOr(Schema.String),
  Membership: Schema.NullOr(Membership),
  By: Schema.String,
  Reason: Schema.String,
  Changes: Schema.Array(MembershipChangeJson),
  HealthyMs: Schema.Number,
  UnhealthyMs: Schema.Number,
  UnknownMs: Schema.Number,
});
export const AuditMembershipResponse = Schema.Struct({
  Since: Schema.String,
  Until: Schema.String,
  Items: Schema.Array(NodeMembershipJson),
  NextToken: Schema.String,
});

export interface AuditMembershipDeps {
  readonly audit: MembershipAudit;
  readonly clock: Pick<Clock, "now">;
  /** A node's exact id from its id or a unique prefix, deleted nodes included; NotFound or MultipleNodesFound. */
  readonly resolve: (idOrPrefix: string) => string;
}

const fail = (field: string, problem: string) => badRequest(`query parameter ${field}: ${problem}`, { field });

function timeOf(field: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const time = parseRfc3339(text);
  if (time === undefined)
    throw fail(field, `${JSON.stringify(text)} is not an RFC 3339 time with its offset, like 2026-11-29T10:00:00Z`);
  return time;
}

function nodesOf(raw: string | readonly string[] | undefined, resolve: (id: string) => string): string[] | undefined {
  if (raw === undefined) return undefined;
  const given = (typeof raw === "string" ? [raw] : raw).flatMap((v) => v.split(",")).map((v) => v.trim());
  if (given.some((v) => v === "")) throw fail("node", "an empty value (leave the parameter out to ask for every node)");
  if (given.length > MAX_MEMBERSHIP_NODES) throw fail("node", `at most ${MAX_MEMBERSHIP_NODES} nodes`);
  const ids = given.map((id) => {
    try {
      return resolve(id);
    } catch (e) {
      // Asking about a node that is not there is the caller's question being wrong, not a missing resource.
      if (e instanceof ShoalError && (e.kind === "NotFound" || e.kind === "MultipleNodesFound"))
        throw fail("node", e.message);
      throw e;
    }
  });
  return [...new Set(ids)];
}

/**
 * `GET /api/v1/orchestrator/audit/membership`: per node, when it joined, who let it in or kept it out and why, and how
 * long it was HEALTHY, UNHEALTHY and UNKNOWN within a window, from the stored events alone (docs/audit.md).
 */
export function auditMembershipRoute(deps: AuditMembershipDeps): AnyRoute {
  return defineRoute({
    method: "GET",
    path: AUDIT_MEMBERSHIP_PATH,
    operationId: "auditMembership",
    tags: ["Audit"],
    summary: "Returns each node's membership and health time in a window.",
    capability: "read:history",
    description:
      "Per node registered at some moment of the window: its first join request, its membership at the window's end and who made the latest change and why, every membership change inside the window, and the milliseconds it spent HEALTHY, UNHEALTHY and UNKNOWN inside it. Paged by node id when no node is named.",
    query: AuditMembershipQuery,
    describe: {
      since: "Start of the window (RFC 3339 with an offset); default: the first stored event",
      until: "End of the window (RFC 3339 with an offset), not later than now; default: now",
      node: `A node's id or a unique prefix; may repeat or be a comma list, at most ${MAX_MEMBERSHIP_NODES}; default: every node`,
      limit: `Nodes per page when no node is named (default ${DEFAULT_MEMBERSHIP_PAGE})`,
      next_token: "Cursor from the previous page's NextToken",
    },
    responses: { "200": { description: "The nodes, by id", schema: AuditMembershipResponse } },
    errors: ["BadRequest", "Unavailable"],
    handler: async ({ query }) => {
      const now = deps.clock.now();
      const until = timeOf("until", query.until) ?? now;
      if (until > now)
        throw fail(
          "until",
          `${query.until} is later than now (${new Date(now).toISOString()}): nothing is known of it yet`,
        );
      const given = timeOf("since", query.since);
      if (given !== undefined && given >= until)
        throw fail("since", `${query.since} is not before until (${new Date(until).toISOString()})`);
      const nodes = nodesOf(query.node, deps.resolve);
      if (nodes !== undefined && (query.limit !== undefined || query.next_token !== undefined))
        throw fail(query.limit !== undefined ? "limit" : "next_token", "pages are for every node: not with node");
      const since = given ?? Math.min((await deps.audit.firstEventTime()) ?? until, until);
      // Event times are whole milliseconds: a window of whole ones holds the same events, and its durations are whole.
      const window = { since: Math.ceil(since), until: Math.floor(until) };
      const body = { Since: new Date(window.since).toISOString(), Until: new Date(window.until).toISOString() };
      if (window.since >= window.until) return { ...body, Items: [], NextToken: "" };
      if (nodes !== undefined) return { ...body, Items: await deps.audit.ofNodes(nodes, window), NextToken: "" };
      const all = await deps.audit.ofCluster(window);
      const start = query.next_token === undefined ? 0 : all.findIndex((n) => n.NodeID > query.next_token!);
      const limit = query.limit ?? DEFAULT_MEMBERSHIP_PAGE;
      const items: NodeMembershipAudit[] = start === -1 ? [] : all.slice(start, start + limit);
      const more = start !== -1 && start + limit < all.length;
      return { ...body, Items: items, NextToken: more ? items.at(-1)!.NodeID : "" };
    },
  });
}
