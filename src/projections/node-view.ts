import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { Health, Membership, NodeInfo, NodeType } from "../events/catalog/node-info.ts";

/** The read model of one node, as stored events describe it (liveness is overlaid by the API). */
export interface NodeView {
  readonly nodeId: string;
  readonly nodeType: NodeType;
  readonly info: NodeInfo;
  readonly membership: Membership;
  readonly health: Health;
  /** Stream revision of the last event applied: the node's ETag. */
  readonly revision: number;
  readonly lifecycle: number;
  /** Deleted nodes leave the list but keep their history (and this view, for history look-ups). */
  readonly deleted: boolean;
  readonly registeredAt: string;
  readonly updatedAt: string;
  /** When Health last changed (or registration): Bacalhau's ConnectedSince / DisconnectedSince. */
  readonly healthSince: string;
  /** LastHeartbeat carried by the last UNHEALTHY/UNKNOWN event. */
  readonly lastHeartbeatAtChange: string | null;
}

export interface EventPosition {
  readonly revision: number;
  readonly time: string;
}

/** Pure evolve: the next view of a node given one of its events. */
export function evolveNodeView(view: NodeView | undefined, event: NodeEvent, at: EventPosition): NodeView | undefined {
  if (event.type === "NodeRegistered") {
    return {
      nodeId: event.data.NodeID,
      nodeType: event.data.NodeType,
      info: event.data.Info,
      membership: event.data.Membership,
      health: "HEALTHY",
      revision: at.revision,
      lifecycle: event.data.Lifecycle,
      deleted: false,
      registeredAt: at.time,
      updatedAt: at.time,
      healthSince: at.time,
      lastHeartbeatAtChange: null,
    };
  }
  if (!view) return undefined;
  const base = { ...view, revision: at.revision, updatedAt: at.time };
  switch (event.type) {
    case "NodeApproved":
      return { ...base, membership: "APPROVED" };
    case "NodeRejected":
      return { ...base, membership: "REJECTED" };
    case "NodeDeleted":
      return { ...base, deleted: true };
    case "NodeInfoUpdated":
      return { ...base, info: event.data.Info };
    case "NodeBecameUnhealthy":
      return { ...base, health: "UNHEALTHY", healthSince: at.time, lastHeartbeatAtChange: event.data.LastHeartbeat };
    case "NodeBecameUnknown":
      return { ...base, health: "UNKNOWN", healthSince: at.time, lastHeartbeatAtChange: event.data.LastHeartbeat };
    case "NodeBecameHealthy":
      return { ...base, health: "HEALTHY", healthSince: at.time };
    // Credentials are not part of the node's API shape; they still move its revision (its ETag).
    case "NodeCredentialBound":
    case "NodeCredentialRevoked":
      return base;
  }
}
