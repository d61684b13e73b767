import type { NodeView } from "../node-view.ts";
import type { SortKey } from "./sorted-entries.ts";

/** The orders the node list offers (Bacalhau's order_by values). */
export const NODE_ORDERS = [
  "id",
  "type",
  "approval",
  "status",
  "available_cpu",
  "available_memory",
  "available_disk",
  "available_gpu",
] as const;
export type NodeOrder = (typeof NODE_ORDERS)[number];

const TYPE_ORDER: Record<string, number> = { Requester: 1, Compute: 2 };
const HEALTH_ORDER: Record<string, number> = { HEALTHY: 0, UNHEALTHY: 1, UNKNOWN: 2 };

/** The status order's key: healthy first. */
export const statusKeyOf = (health: string): number => HEALTH_ORDER[health] ?? 0;

/** The kind of key an order sorts by: a next_token's key must be of it. */
export const keyTypeOf = (order: NodeOrder): "string" | "number" =>
  order === "id" || order === "approval" ? "string" : "number";

/**
 * A node's sort key for an order. Its last reported available capacity is `capacity[at … at + 3]`
 * (CPU, Memory, Disk, GPU; NaN for a field the report left out), `at` −1 when it reported none:
 * the API overlays it on compute nodes; nodes without ComputeNodeInfo show no capacity at all.
 */
export function sortKeyOf(view: NodeView, order: NodeOrder, capacity: Float64Array, at: number): SortKey {
  switch (order) {
    case "id":
      return view.info.NodeID;
    case "type":
      return TYPE_ORDER[view.info.NodeType] ?? 0;
    case "approval":
      return view.membership;
    case "status":
      return statusKeyOf(view.health);
    // Capacity sorts put the most available first, as Bacalhau does.
    case "available_cpu":
      return capacityKey(view, capacity, at, 0);
    case "available_memory":
      return capacityKey(view, capacity, at, 1);
    case "available_disk":
      return capacityKey(view, capacity, at, 2);
    case "available_gpu":
      return capacityKey(view, capacity, at, 3);
  }
}

/** −(the field), or −0 when the node shows none (no ComputeNodeInfo, no report, the field left out). */
function capacityKey(view: NodeView, capacity: Float64Array, at: number, field: number): number {
  const v = view.info.ComputeNodeInfo === undefined || at < 0 ? Number.NaN : (capacity[at + field] as number);
  return Number.isNaN(v) ? -0 : -v;
}
