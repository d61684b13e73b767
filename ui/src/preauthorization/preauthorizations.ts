import type { ClusterEvent } from "../api/types.ts";

/** A node id let in before it joins (docs/nodes.md, Pre-authorised join), as its NodePreauthorized event says. */
export interface Preauthorization {
  readonly nodeId: string;
  /** Only a node joining with this NATS user nkey is let in on the strength of it; absent: the id alone. */
  readonly publicKey?: string;
  readonly reason: string;
  readonly by: string;
  readonly at: string;
  readonly position: number;
}

/** The events that start or end a pre-authorisation: read from the feed, in store order. */
export const PREAUTHORIZATION_TYPES = ["NodePreauthorized", "NodePreauthorizationRevoked", "NodeDeleted"] as const;
/** A pre-authorised node that registers has joined: its pre-authorisation no longer waits. */
export const JOINED_TYPE = "NodeRegistered";

const NODE_STREAM = "node-";

/**
 * The ids still pre-authorised and not joined, oldest first, from their nodes' events in store order: a
 * NodePreauthorized opens one; a revoke, a delete or the node registering closes it (as the orchestrator's own
 * admission reads the node's state). The API has no list of them: the feed's events are what it can show.
 */
export function outstandingPreauthorizations(events: readonly ClusterEvent[]): Preauthorization[] {
  const open = new Map<string, Preauthorization>();
  for (const e of [...events].sort((a, b) => a.position - b.position)) {
    if (!e.stream.startsWith(NODE_STREAM)) continue;
    const nodeId = e.stream.slice(NODE_STREAM.length);
    if (e.type !== "NodePreauthorized") {
      open.delete(nodeId);
      continue;
    }
    const { PublicKey, Reason } = e.data as { PublicKey?: unknown; Reason?: unknown };
    open.delete(nodeId);
    open.set(nodeId, {
      nodeId,
      ...(typeof PublicKey === "string" ? { publicKey: PublicKey } : {}),
      reason: typeof Reason === "string" && Reason !== "" ? Reason : (e.metadata.reason ?? ""),
      by: `${e.metadata.actor.type}:${e.metadata.actor.id}`,
      at: e.time,
      position: e.position,
    });
  }
  return [...open.values()];
}

/** `ids` in groups of at most `size`: the feed takes a few entities a request. */
export function batches<T>(ids: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
  return out;
}
