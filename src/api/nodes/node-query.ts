import { Schema } from "effect";
import { badRequest } from "../../errors/shoal-error.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { QueryBool } from "../query-bool.ts";
import { LabelSelectorError, parseLabelSelector } from "../../labels/label-selector.ts";
import type { Membership } from "../../events/catalog/node-info.ts";
import type { NodeIndex, StatusFilter } from "../../projections/node-index/node-index.ts";
import { NODE_ORDERS, keyTypeOf, type NodeOrder } from "../../projections/node-index/node-order.ts";
import type { SortKey } from "../../projections/node-index/sorted-entries.ts";
import type { NodeView } from "../../projections/node-view.ts";

const ORDER_BY = NODE_ORDERS;
type OrderBy = NodeOrder;

const UpperCased = (values: readonly string[]) =>
  Schema.transform(Schema.String, Schema.Literal(...(values as [string, ...string[]])), {
    strict: false,
    decode: (s) => s.toUpperCase(),
    encode: (s) => s,
  });

export const ListNodesQuery = Schema.Struct({
  limit: Schema.optional(DecimalInteger(1, 10_000)),
  next_token: Schema.optional(Schema.String),
  order_by: Schema.optional(Schema.Literal(...ORDER_BY, "")),
  reverse: Schema.optional(QueryBool),
  "filter-approval": Schema.optional(UpperCased(["PENDING", "APPROVED", "REJECTED", ""])),
  "filter-status": Schema.optional(UpperCased(["HEALTHY", "UNHEALTHY", "UNKNOWN", "CONNECTED", "DISCONNECTED", ""])),
  labels: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  "filter-cordoned": Schema.optional(QueryBool),
  /** A drain's status (`none`: never drained, or undrained since). */
  "filter-drain": Schema.optional(Schema.Literal("draining", "drained", "expired", "none", "")),
});
export type ListNodesQuery = typeof ListNodesQuery.Type;

interface Cursor {
  readonly o: OrderBy;
  readonly r: boolean;
  readonly k: SortKey;
  readonly i: string;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

function decodeCursor(token: string, orderBy: OrderBy, reverse: boolean): Cursor {
  try {
    const c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Cursor;
    if (typeof c.i !== "string" || (typeof c.k !== "string" && typeof c.k !== "number")) throw new Error("malformed");
    if (c.o !== orderBy || c.r !== reverse) throw badRequest("next_token was issued for a different order_by/reverse");
    // A key of another type than the order's has no place in its index (this API never issues one).
    if (typeof c.k !== keyTypeOf(orderBy)) throw new Error("malformed");
    return c;
  } catch (e) {
    if (e instanceof Error && e.name === "ShoalError") throw e;
    throw badRequest("invalid next_token");
  }
}

/**
 * Bacalhau's processing order: filter approval, then status, then labels; sort; then page —
 * answered from the node index, so a page costs O(page + log N) (see NodeIndex for the bounds).
 * Pages are cursor-based (the last node's sort key and id), so they stay correct while nodes change.
 * A limited page may hold fewer than limit nodes, even none, with a NextToken: a label selector
 * that almost no node matches ends its page at the index's scan budget; keep paging while
 * NextToken is not empty.
 */
export function queryNodes<T>(
  index: NodeIndex,
  query: ListNodesQuery,
  present: (view: NodeView) => T,
): { Nodes: T[]; NextToken: string } {
  const orderBy: OrderBy = query.order_by === undefined || query.order_by === "" ? "id" : query.order_by;
  const reverse = query.reverse ?? false;
  let selector;
  try {
    const text = typeof query.labels === "string" ? query.labels : (query.labels ?? []).join(",");
    selector = parseLabelSelector(text);
  } catch (e) {
    if (e instanceof LabelSelectorError) throw badRequest(`query parameter labels: ${e.message}`, { field: "labels" });
    throw e;
  }
  // The schema admits only these values (UpperCased erases their literal types).
  const approval = (query["filter-approval"] || undefined) as Membership | undefined;
  const status = (query["filter-status"] || undefined) as StatusFilter | undefined;
  const cursor = query.next_token ? decodeCursor(query.next_token, orderBy, reverse) : undefined;
  const page = index.query({
    order: orderBy,
    reverse,
    ...(cursor ? { after: { key: cursor.k, id: cursor.i } } : {}),
    ...(approval ? { approval } : {}),
    ...(status ? { status } : {}),
    selector,
    ...(query["filter-cordoned"] === undefined ? {} : { cordoned: query["filter-cordoned"] }),
    ...(query["filter-drain"] === undefined || query["filter-drain"] === "" ? {} : { drain: query["filter-drain"] }),
    limit: query.limit ?? Number.POSITIVE_INFINITY,
  });
  const NextToken =
    page.more && page.lastId !== undefined && page.lastKey !== undefined
      ? encodeCursor({ o: orderBy, r: reverse, k: page.lastKey, i: page.lastId })
      : "";
  return { Nodes: page.views.map(present), NextToken };
}
