import type { NodeVerdict } from "./node-verdicts.ts";

/**
 * Bacalhau's short node id [pkg/util/idgen/short_id.go]: "n-<uuid>" → "n-" + the uuid's first
 * group, a bare uuid → its first group, a libp2p "Qm…" id → 8 characters; else the id itself.
 */
export function shortNodeId(id: string): string {
  const prefixed = /^([a-zA-Z])-(\w{8})-\w{4}-\w{4}-\w{4}-\w{12}$/.exec(id);
  if (prefixed) return `${prefixed[1]}-${prefixed[2]}`;
  const uuid = /^(\w{8})-\w{4}-\w{4}-\w{4}-\w{12}$/.exec(id);
  if (uuid) return uuid[1] as string;
  if (/^Qm[a-zA-Z0-9]{44}$/.test(id)) return id.slice(0, 8);
  return id;
}

/**
 * One bullet per distinct reason among the available nodes that cannot take the job:
 * "• Node n-1a2b3c4d: <reason>" or "• 3 of 4 nodes: <reason>". Bacalhau keeps one reason per
 * node (the last filter that failed) and prints Go's random map order; Shoal joins all of a
 * node's reasons with "; " and prints the largest groups first, then in node-id order.
 */
export function reasonBullets(verdicts: readonly NodeVerdict[]): string {
  const available = verdicts.filter((v) => v.available);
  const groups = new Map<string, string[]>();
  for (const v of available) {
    if (v.suitable) continue;
    const reason = v.rejections.map((r) => r.message).join("; ");
    const ids = groups.get(reason);
    if (ids) ids.push(v.nodeId);
    else groups.set(reason, [v.nodeId]);
  }
  const ordered = [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
  return ordered
    .map(
      ([reason, ids]) =>
        `\n• ${ids.length > 1 ? `${ids.length} of ${available.length} nodes` : `Node ${shortNodeId(ids[0] as string)}`}: ${reason}`,
    )
    .join("");
}

/** Bacalhau's ErrNotEnoughNodes (v1.7) for a batch or service job. */
export function notEnoughNodesMessage(requested: number, verdicts: readonly NodeVerdict[]): string {
  const available = verdicts.filter((v) => v.available).length;
  const suitable = verdicts.filter((v) => v.suitable).length;
  return `not enough nodes to run job. requested: ${requested}, available: ${available}, suitable: ${suitable}.${reasonBullets(verdicts)}`;
}

/** Bacalhau's ErrNoMatchingNodes (v1.7) for an ops or daemon job. */
export function noMatchingNodesMessage(verdicts: readonly NodeVerdict[]): string {
  const available = verdicts.filter((v) => v.available).length;
  return `not matching nodes to run job out of ${available} available nodes.${reasonBullets(verdicts)}`;
}

/** Bacalhau's history message for a job that becomes Queued [pkg/orchestrator/events.go JobQueueingEvent]. */
export function jobQueuedMessage(reason: string): string {
  return reason === "" ? "Job queued" : `Job queued. ${reason}`;
}
