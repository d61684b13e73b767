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

function revoke(snapshot: NodeSnapshot, reason: "rejected" | "deleted"): NodeEvent[] {
  const held = snapshot.context.credential;
  return held?.active ? [{ type: "NodeCredentialRevoked", data: { NodeID: snapshot.context.nodeId, PublicKey: held.publicKey, Reason: reason } }] : [];
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
      const bind = (publicKey: string): NodeEvent => ({ type: "NodeCredentialBound", data: { NodeID: nodeId, PublicKey: publicKey, Reinstated: false } });
      if (!registered) {
        const approved = command.info.NodeType === "Requester" || !command.manualApproval;
        const registeredEvent: NodeEvent = {
          type: "NodeRegistered",
          data: { NodeID: nodeId, NodeType: command.info.NodeType, Info: command.info, Membership: approved ? "APPROVED" : "PENDING", Lifecycle: lifecycle + 1 },
        };
        return accept(command.publicKey === undefined ? [registeredEvent] : [registeredEvent, bind(command.publicKey)], "node registered");
      }
      if (membership === "REJECTED") return refuse({ code: "Rejected", message: "node has been rejected" });
      if (command.info.NodeType !== nodeType) {
        return refuse({ code: "Conflict", message: `node ${nodeId} is registered as ${nodeType}, not ${command.info.NodeType}` });
      }
      const held = snapshot.context.credential;
      if (command.publicKey !== undefined && held?.active && held.publicKey !== command.publicKey) {
        // One key per node id: whoever holds the join token may not take over a live node's identity.
        return refuse({
          code: "Conflict",
          message: `node ${nodeId} is already bound to another key; an operator must delete the node before it can join with a new one`,
        });
      }
      const binding = command.publicKey !== undefined && !held?.active ? [bind(command.publicKey)] : [];
      return accept([...binding, ...infoUpdate(snapshot, command.info)], "node already registered");
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
      if (!snapshot.can(event)) return refuse({ code: "Conflict", message: `node ${nodeId} already approved` });
      // The key a reject revoked is let in again: the node comes back without re-joining.
      const held = snapshot.context.credential;
      const reinstate: NodeEvent[] =
        held && !held.active ? [{ type: "NodeCredentialBound", data: { NodeID: nodeId, PublicKey: held.publicKey, Reinstated: true } }] : [];
      return accept([event, ...reinstate]);
    }
    case "Reject": {
      if (!registered) return notFound;
      if (nodeType === "Requester") return refuse({ code: "Conflict", message: `node ${nodeId} is the orchestrator and cannot be rejected` });
      const event: NodeEvent = { type: "NodeRejected", data: { NodeID: nodeId, Previous: membership ?? "PENDING" } };
      if (!snapshot.can(event)) return refuse({ code: "Conflict", message: `node ${nodeId} already rejected` });
      return accept([event, ...revoke(snapshot, "rejected")]);
    }
    case "Delete":
      if (!registered) return notFound;
      if (nodeType === "Requester") return refuse({ code: "Conflict", message: `node ${nodeId} is the orchestrator and cannot be deleted` });
      // Revoked before the delete: a deleted node has no credential to revoke.
      return accept([...revoke(snapshot, "deleted"), { type: "NodeDeleted", data: { NodeID: nodeId, Membership: membership ?? "PENDING" } }]);
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
