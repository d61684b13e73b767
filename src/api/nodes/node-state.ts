import type { LiveView } from "../../actors/node-manager.ts";
import type { ComputeNodeInfo, Health, Membership, NodeInfo, Resources } from "../../events/catalog/node-info.ts";
import type { NodeView } from "../../projections/node-view.ts";

/** Bacalhau's models.NodeState, plus Shoal's Health and Revision. */
export interface NodeState {
  readonly Info: Omit<NodeInfo, "ComputeNodeInfo"> & {
    readonly ComputeNodeInfo?: ComputeNodeInfo & {
      readonly AvailableCapacity: Resources;
      readonly QueueCapacity: Resources;
      readonly RunningExecutions: number;
      readonly EnqueuedExecutions: number;
    };
  };
  readonly Membership: Membership;
  /** Deprecated in Bacalhau, mirrored from ConnectionState.Status. */
  readonly Connection: "CONNECTED" | "DISCONNECTED";
  readonly ConnectionState: {
    readonly Status: "CONNECTED" | "DISCONNECTED";
    readonly LastHeartbeat: string | null;
    readonly ConnectedSince?: string;
    readonly DisconnectedSince?: string;
  };
  readonly Health: Health;
  readonly Revision: number;
}

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function toNodeState(view: NodeView, live: LiveView | undefined): NodeState {
  const status = view.health === "HEALTHY" ? "CONNECTED" : "DISCONNECTED";
  const { ComputeNodeInfo: compute, ...staticInfo } = view.info;
  const resources = live?.resources;
  const info: NodeState["Info"] = compute
    ? {
        ...staticInfo,
        ComputeNodeInfo: {
          ...compute,
          // Until the node reports resources, nothing is known to be available.
          AvailableCapacity: resources?.AvailableCapacity ?? {},
          QueueCapacity: resources?.QueueUsedCapacity ?? {},
          RunningExecutions: resources?.RunningExecutions ?? 0,
          EnqueuedExecutions: resources?.EnqueuedExecutions ?? 0,
        },
      }
    : staticInfo;
  return {
    Info: info,
    Membership: view.membership,
    Connection: status,
    ConnectionState: {
      Status: status,
      LastHeartbeat: iso(live?.lastHeartbeat) ?? view.lastHeartbeatAtChange,
      ...(status === "CONNECTED" ? { ConnectedSince: view.healthSince } : { DisconnectedSince: view.healthSince }),
    },
    Health: view.health,
    Revision: view.revision,
  };
}
