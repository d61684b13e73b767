import { Schema } from "effect";
import { badRequest } from "../../errors/shoal-error.ts";
import type { ClusterAsOf } from "../../projections/as-of/cluster-as-of.ts";
import type { AuditDiff } from "../../projections/audit-diff/audit-diff.ts";
import { parseRfc3339 } from "../events/rfc3339-time.ts";
import { defineRoute, type AnyRoute } from "../route.ts";

export const AUDIT_DIFF_PATH = "/api/v1/orchestrator/audit/diff";
/** Changes in one answer at most; a longer window ends early and says where (Through). */
export const MAX_DIFF_CHANGES = 10_000;

const Moment = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64));
export const AuditDiffQuery = Schema.Struct({ from: Moment, to: Moment });

const AuditChangeJson = Schema.Struct({
  Position: Schema.Number,
  Time: Schema.String,
  Entity: Schema.String,
  Change: Schema.String,
  Event: Schema.String,
  By: Schema.String,
  Reason: Schema.String,
  Details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
});
const MomentJson = Schema.Struct({ Position: Schema.Number, Time: Schema.optional(Schema.String) });
export const AuditDiffResponse = Schema.Struct({
  From: MomentJson,
  To: MomentJson,
  Through: Schema.Number,
  Nodes: Schema.Array(AuditChangeJson),
  Jobs: Schema.Array(AuditChangeJson),
});

export interface AuditDiffDeps {
  readonly diff: AuditDiff;
  readonly asOf: ClusterAsOf;
}

interface Resolved {
  readonly position: number;
  readonly time?: number;
}

/** A moment as the store position it names: a position as given, a time as as_of reads it (docs/audit.md). */
async function resolve(asOf: ClusterAsOf, field: "from" | "to", value: string, head: number): Promise<Resolved> {
  if (/^[0-9]{1,15}$/.test(value)) {
    const position = Number(value);
    if (position > head)
      throw badRequest(`query parameter ${field}: position ${position} is beyond the newest event (${head})`, {
        field,
      });
    return { position };
  }
  const time = parseRfc3339(value);
  if (time === undefined)
    throw badRequest(
      `query parameter ${field}: ${JSON.stringify(value)} is neither a store position nor an RFC 3339 time with its offset, like 2026-11-29T10:00:00Z`,
      { field },
    );
  const now = asOf.now();
  if (time > now)
    throw badRequest(
      `query parameter ${field}: ${value} is later than now (${new Date(now).toISOString()}): no state is known for it yet`,
      { field },
    );
  return { position: await asOf.positionAt(time), time };
}

const momentJson = (m: Resolved) =>
  m.time === undefined ? { Position: m.position } : { Position: m.position, Time: new Date(m.time).toISOString() };

/**
 * `GET /api/v1/orchestrator/audit/diff`: what changed in the cluster between two moments (docs/audit.md, What changed
 * between two moments). `read:history`, as the feed: every change names who made it.
 */
export function auditDiffRoute({ diff, asOf }: AuditDiffDeps): AnyRoute {
  return defineRoute({
    method: "GET",
    path: AUDIT_DIFF_PATH,
    operationId: "auditDiff",
    tags: ["Audit"],
    summary: "Returns what changed between two moments.",
    capability: "read:history",
    description:
      "What changed in the cluster between two moments: the node and job changes of the events after `from` up to `to`, in store order, each with its position, time, who made it and why. A change undone inside the window is listed, and so is its undoing.",
    query: AuditDiffQuery,
    describe: {
      from: "The earlier moment: an RFC 3339 time with its offset (read as as_of reads it) or a store position; changes after it are listed",
      to: "The later moment, the same way; changes up to it are listed",
    },
    responses: {
      "200": {
        description: `The changes, oldest first; Through is short of To.Position when the window held more than ${MAX_DIFF_CHANGES} (ask again from Through)`,
        schema: AuditDiffResponse,
      },
    },
    errors: ["BadRequest", "Unavailable"],
    handler: async ({ query }) => {
      const head = await asOf.head();
      const from = await resolve(asOf, "from", query.from, head);
      const to = await resolve(asOf, "to", query.to, head);
      // Two moments of the same kind compare as given; a time and a position, by the positions they name.
      const sameKind = (from.time === undefined) === (to.time === undefined);
      const fromFirst = sameKind
        ? (from.time ?? from.position) < (to.time ?? to.position)
        : from.position <= to.position;
      if (!fromFirst)
        throw badRequest(`query parameter from: ${query.from} is not before to (${query.to})`, { field: "from" });
      const changes = await diff.diff(from.position, to.position, MAX_DIFF_CHANGES);
      return {
        From: momentJson(from),
        To: momentJson(to),
        Through: changes.through,
        Nodes: changes.nodes,
        Jobs: changes.jobs,
      };
    },
  });
}
