import { Schema } from "effect";
import { badRequest } from "../../errors/shoal-error.ts";
import { LabelSelectorError, parseLabelSelector } from "../../labels/label-selector.ts";
import { JOB_ORDERS, type JobOrder } from "../../projections/jobs/job-index.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import type { SortKey } from "../../projections/node-index/sorted-entries.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { QueryBool } from "../query-bool.ts";

export const ListJobsQuery = Schema.Struct({
  limit: Schema.optional(DecimalInteger(1, 10_000)),
  next_token: Schema.optional(Schema.String.pipe(Schema.maxLength(1024))),
  order_by: Schema.optional(Schema.Literal(...JOB_ORDERS, "")),
  reverse: Schema.optional(QueryBool),
  namespace: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  labels: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
});
export type ListJobsQuery = typeof ListJobsQuery.Type;

/** Bacalhau's apimodels.AllNamespacesNamespace: what its CLI sends for every namespace. */
const ALL_NAMESPACES = "*";

/** Bacalhau's default page (its ListJobs answers 100 without a limit too). */
const DEFAULT_LIMIT = 100;

interface Cursor {
  readonly o: JobOrder;
  readonly r: boolean;
  readonly k: SortKey;
  readonly i: string;
}

const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify(c)).toString("base64url");

function decodeCursor(token: string, order: JobOrder, reverse: boolean): Cursor {
  let c: Cursor;
  try {
    c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Cursor;
  } catch {
    throw badRequest("invalid next_token: use the NextToken of the previous page");
  }
  const keyType = order === "id" ? "string" : "number";
  if (c === null || typeof c !== "object" || typeof c.i !== "string" || typeof c.k !== keyType)
    throw badRequest("invalid next_token: use the NextToken of the previous page");
  if (c.o !== order || c.r !== reverse) throw badRequest("next_token was issued for a different order_by/reverse");
  return c;
}

/**
 * One page of jobs from the index: namespace (all when absent, empty, or Bacalhau's `*`), label selector, order,
 * then the page. The cursor is the last job's sort key and id, so pages stay correct while jobs
 * change. A page may hold fewer than `limit` jobs with a NextToken when a selector matches few:
 * keep paging while NextToken is not empty.
 */
export function queryJobs(views: JobViews, query: ListJobsQuery): { Items: JobState[]; NextToken: string } {
  const order: JobOrder = query.order_by === undefined || query.order_by === "" ? "created_at" : query.order_by;
  const reverse = query.reverse ?? false;
  let selector;
  try {
    selector = parseLabelSelector(typeof query.labels === "string" ? query.labels : (query.labels ?? []).join(","));
  } catch (e) {
    if (e instanceof LabelSelectorError) throw badRequest(`query parameter labels: ${e.message}`, { field: "labels" });
    throw e;
  }
  const cursor = query.next_token ? decodeCursor(query.next_token, order, reverse) : undefined;
  const page = views.index.query(
    {
      order,
      reverse,
      ...(cursor ? { after: { key: cursor.k, id: cursor.i } } : {}),
      ...(query.namespace && query.namespace !== ALL_NAMESPACES ? { namespace: query.namespace } : {}),
      selector,
      limit: query.limit ?? DEFAULT_LIMIT,
    },
    (id) => views.job(id),
  );
  const NextToken =
    page.more && page.lastId !== undefined && page.lastKey !== undefined
      ? encodeCursor({ o: order, r: reverse, k: page.lastKey, i: page.lastId })
      : "";
  return { Items: page.jobs, NextToken };
}
