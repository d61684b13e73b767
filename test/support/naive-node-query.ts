/**
 * The node list as it was answered before the node index: map, filter and sort every node,
 * then page. Kept verbatim as the specification the indexed query must equal.
 */
import { badRequest } from "../../src/errors/shoal-error.ts";
import { LabelSelectorError, matchesLabels, parseLabelSelector } from "../../src/labels/label-selector.ts";
import type { ListNodesQuery } from "../../src/api/nodes/node-query.ts";
import type { NodeState } from "../../src/api/nodes/node-state.ts";

type OrderBy =
  "id" | "type" | "approval" | "status" | "available_cpu" | "available_memory" | "available_disk" | "available_gpu";

const TYPE_ORDER: Record<string, number> = { Requester: 1, Compute: 2 };
const HEALTH_ORDER: Record<string, number> = { HEALTHY: 0, UNHEALTHY: 1, UNKNOWN: 2 };

type Key = string | number;

function sortKey(node: NodeState, orderBy: OrderBy): Key {
  const available = node.Info.ComputeNodeInfo?.AvailableCapacity;
  switch (orderBy) {
    case "id":
      return node.Info.NodeID;
    case "type":
      return TYPE_ORDER[node.Info.NodeType] ?? 0;
    case "approval":
      return node.Membership;
    case "status":
      return HEALTH_ORDER[node.Health] ?? 0;
    // Capacity sorts put the most available first, as Bacalhau does.
    case "available_cpu":
      return -(available?.CPU ?? 0);
    case "available_memory":
      return -(available?.Memory ?? 0);
    case "available_disk":
      return -(available?.Disk ?? 0);
    case "available_gpu":
      return -(available?.GPU ?? 0);
  }
}

interface Cursor {
  readonly o: OrderBy;
  readonly r: boolean;
  readonly k: Key;
  readonly i: string;
}

const compareKeys = (a: Key, b: Key): number => (a < b ? -1 : a > b ? 1 : 0);

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

function decodeCursor(token: string, orderBy: OrderBy, reverse: boolean): Cursor {
  try {
    const c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Cursor;
    if (typeof c.i !== "string" || (typeof c.k !== "string" && typeof c.k !== "number")) throw new Error("malformed");
    if (c.o !== orderBy || c.r !== reverse) throw badRequest("next_token was issued for a different order_by/reverse");
    return c;
  } catch (e) {
    if (e instanceof Error && e.name === "ShoalError") throw e;
    throw badRequest("invalid next_token");
  }
}

/**
 * Bacalhau's processing order: filter approval, then status, then labels; sort; then page.
 * Pages are cursor-based (the last node's sort key and id), so they stay correct while nodes change.
 */
export function naiveQueryNodes(
  nodes: readonly NodeState[],
  query: ListNodesQuery,
): { Nodes: NodeState[]; NextToken: string } {
  const orderBy: OrderBy = query.order_by === undefined || query.order_by === "" ? "id" : query.order_by;
  const reverse = query.reverse ?? false;
  let selector;
  try {
    const text = typeof query.labels === "string" ? query.labels : (query.labels ?? []).join(",");
    selector = parseLabelSelector(text);
  } catch (e) {
    if (e instanceof LabelSelectorError) throw badRequest(e.message);
    throw e;
  }
  const approval = query["filter-approval"] || undefined;
  const status = query["filter-status"] || undefined;
  const compare = (a: { k: Key; i: string }, b: { k: Key; i: string }) => {
    const c = compareKeys(a.k, b.k) || compareKeys(a.i, b.i);
    return reverse ? -c : c;
  };

  let keyed = nodes
    .filter((n) => approval === undefined || n.Membership === approval)
    .filter((n) => {
      if (status === undefined) return true;
      if (status === "CONNECTED") return n.Health === "HEALTHY";
      if (status === "DISCONNECTED") return n.Health !== "HEALTHY";
      return n.Health === status;
    })
    .filter((n) => matchesLabels(selector, n.Info.Labels))
    .map((n) => ({ node: n, k: sortKey(n, orderBy), i: n.Info.NodeID }))
    .sort(compare);

  if (query.next_token) {
    const cursor = decodeCursor(query.next_token, orderBy, reverse);
    keyed = keyed.filter((x) => compare(x, { k: cursor.k, i: cursor.i }) > 0);
  }
  const limit = query.limit ?? keyed.length;
  const page = keyed.slice(0, limit);
  const last = page[page.length - 1];
  const more = keyed.length > page.length && last !== undefined;
  return {
    Nodes: page.map((x) => x.node),
    NextToken: more ? encodeCursor({ o: orderBy, r: reverse, k: last.k, i: last.i }) : "",
  };
}
