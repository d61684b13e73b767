import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";
import { changedInfoFields } from "./info-diff.ts";
import type { NodeCommand, NodeRefusal } from "./node-commands.ts";
import { isRegistered, nodeHealth, type NodeSnapshot } from "./node-machine.ts";

export type NodeDecision =
  | { readonly ok: true; readonly events: readonly NodeEvent[]; readonly note?: string }
  | { readonly ok: false; readonly refusal: NodeRefusal };

const accept = (events: readonly NodeEvent[], note?: string): NodeDecision =>
  note === undefined ? { ok: true, events } : { ok: true, events, note };
const refuse = (refusal: NodeRefusal): NodeDecision => ({ ok: false, refusal });

function infoUpdate(snapshot: NodeSnapshot, info: NodeInfo): NodeEvent[] {
  const before = snapshot.context.info;
  if (!before) return [];
  const changed = changedInfoFields(before, info);
  return changed.length === 0 ? [] : [{ type: "NodeInfoUpdated", data: { NodeID: snapshot.context.nodeId, Info: info, Changed: changed } }];
}

/**
 * The node's rules: given its current state and a command, which events happen, or why not.
 * Transition legality comes from the machine (`snapshot.can`); the rest are Bacalhau's rules.
 */
export function decideNode(snapshot: NodeSnapshot, command: NodeCommand): NodeDecision {
  const { nodeId, membership, nodeType, lifecycle } = snapshot.context;
  const registered = isRegistered(snapshot);
  const notFound = refuse({ code: "NotFound", message: `node not found: ${nodeId}` });

  switch (command.type) {
    case "Register": {
      if (command.info.NodeID !== nodeId) {
        return refuse({ code: "Conflict", message: `node info is for ${command.info.NodeID}, not ${nodeId}` });
      }
      if (!registered) {
        const approved = command.info.NodeType === "Requester" || !command.manualApproval;
        return accept([
          {
            type: "NodeRegistered",
            data: { NodeID: nodeId, NodeType: command.info.NodeType, Info: command.info, Membership: approved ? "APPROVED" : "PENDING", Lifecycle: lifecycle + 1 },
          },
        ], "node registered");
      }
      if (membership === "REJECTED") return refuse({ code: "Rejected", message: "node has been rejected" });
      if (command.info.NodeType !== nodeType) {
        return refuse({ code: "Conflict", message: `node ${nodeId} is registered as ${nodeType}, not ${command.info.NodeType}` });
      }
      return accept(infoUpdate(snapshot, command.info), "node already registered");
    }
    case "UpdateInfo": {
      if (!registered) return refuse({ code: "NotFound", message: `node not registered: ${nodeId}` });
      if (membership === "REJECTED") return refuse({ code: "Rejected", message: "node registration rejected" });
      if (command.info.NodeID !== nodeId || command.info.NodeType !== nodeType) {
        return refuse({ code: "Conflict", message: `node info does not match registered node ${nodeId} (${nodeType})` });
      }
      return accept(infoUpdate(snapshot, command.info));
    }
    case "Approve": {
      if (!registered) return notFound;
      const event: NodeEvent = { type: "NodeApproved", data: { NodeID: nodeId, Previous: membership ?? "PENDING" } };
      return snapshot.can(event) ? accept([event]) : refuse({ code: "Conflict", message: `node ${nodeId} already approved` });
    }
    case "Reject": {
      if (!registered) return notFound;
      if (nodeType === "Requester") return refuse({ code: "Conflict", message: `node ${nodeId} is the orchestrator and cannot be rejected` });
      const event: NodeEvent = { type: "NodeRejected", data: { NodeID: nodeId, Previous: membership ?? "PENDING" } };
      return snapshot.can(event) ? accept([event]) : refuse({ code: "Conflict", message: `node ${nodeId} already rejected` });
    }
    case "Delete":
      if (!registered) return notFound;
      if (nodeType === "Requester") return refuse({ code: "Conflict", message: `node ${nodeId} is the orchestrator and cannot be deleted` });
      return accept([{ type: "NodeDeleted", data: { NodeID: nodeId, Membership: membership ?? "PENDING" } }]);
    case "MarkUnhealthy": {
      const event: NodeEvent = {
        type: "NodeBecameUnhealthy",
        data: { NodeID: nodeId, LastHeartbeat: command.lastHeartbeat, DisconnectTimeoutMs: command.disconnectTimeoutMs },
      };
      return accept(snapshot.can(event) ? [event] : []);
    }
    case "MarkUnknown": {
      const event: NodeEvent = {
        type: "NodeBecameUnknown",
        data: { NodeID: nodeId, LastHeartbeat: command.lastHeartbeat, UnknownTimeoutMs: command.unknownTimeoutMs },
      };
      return accept(snapshot.can(event) ? [event] : []);
    }
    case "MarkHealthy": {
      const previous = nodeHealth(snapshot);
      if (previous === undefined || previous === "HEALTHY") return accept([]);
      return accept([{ type: "NodeBecameHealthy", data: { NodeID: nodeId, Previous: previous } }]);
    }
  }
}
